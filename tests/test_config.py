"""Settings: environment names, the settings file, and secrets that never print."""

from cpqa.config import NCBI_EUTILS_URL, get_settings


def test_environment_names_map_to_fields(monkeypatch, tmp_path):
    monkeypatch.setenv("CPQA_HOME", str(tmp_path))
    monkeypatch.setenv("CPQA_PROFILE", "paper")
    monkeypatch.setenv("CPQA_EUTILS_URL", "http://127.0.0.1:9/")
    monkeypatch.setenv("CPQA_VECTOR_STORE", "milvus")
    monkeypatch.setenv("NCBI_API_KEY", "ncbi-secret-123")
    s = get_settings()
    assert s.cpqa_profile == "paper"
    assert s.cpqa_eutils_url == "http://127.0.0.1:9/"
    assert s.cpqa_vector_store == "milvus"
    assert s.ncbi_rate_limit == 10.0
    assert s.store_path.parent == tmp_path


def test_defaults(home):
    s = get_settings()
    assert s.cpqa_eutils_url == NCBI_EUTILS_URL
    assert s.ncbi_rate_limit == 3.0
    assert not s.has_anthropic


def test_settings_file_uses_the_same_names(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("CPQA_PROFILE", raising=False)
    (tmp_path / "cpqa.env").write_text("CPQA_PROFILE=offline\nCPQA_LLM_MODEL=claude-test\nCPQA_HOME=%s\n" % tmp_path)
    s = get_settings()
    assert s.cpqa_profile == "offline"
    assert s.cpqa_llm_model == "claude-test"


def test_secrets_never_print(home, monkeypatch):
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-very-secret")
    s = get_settings()
    assert s.has_anthropic
    assert "sk-ant-very-secret" not in repr(s)
    assert "sk-ant-very-secret" not in s.model_dump_json()
    assert s.redact("key=sk-ant-very-secret") == "key=[REDACTED]"
