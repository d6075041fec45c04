"""The training loop ``fit`` runs for both models, and the library versions it records. torch only."""

from __future__ import annotations

import json
import platform
import time
from pathlib import Path
from typing import Any, Callable


def train(
    model, batches: list[tuple[int, list]], loss_fn: Callable, args, log: list[dict[str, Any]], out: Path
) -> dict[str, Any]:
    """AdamW with linear warm-up (10 %) and decay, gradients clipped at 1; stops at the time budget."""
    import torch

    params = [p for p in model.parameters() if p.requires_grad]
    optimizer = torch.optim.AdamW(params, lr=args.lr, weight_decay=0.01)
    total, warm = len(batches), max(1, len(batches) // 10)
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warm, max(0.0, (total - s) / max(1, total - warm)))
    )
    cuda = args.device.startswith("cuda")
    bf16 = cuda and torch.cuda.is_bf16_supported()
    scaler = torch.amp.GradScaler("cuda", enabled=cuda and not bf16)
    model.train()
    start, cpu, running, seen, stopped = time.perf_counter(), time.process_time(), [], 0, False
    for step, (epoch, batch) in enumerate(batches, 1):
        with torch.autocast("cuda", dtype=torch.bfloat16 if bf16 else torch.float16, enabled=cuda):
            loss = loss_fn(batch, epoch)
        scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(params, 1.0)
        scaler.step(optimizer)
        scaler.update()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        running.append(loss.detach())
        seen += len(batch)
        elapsed = time.perf_counter() - start
        stopped = elapsed > args.budget_minutes * 60 and step < total
        if step % args.log_every == 0 or step == total or stopped:
            mean = float(torch.stack(running).float().mean())
            log.append({"step": step, "epoch": epoch, "loss": round(mean, 5), "seconds": round(elapsed, 1)})
            running = []
            (out / "training_log.json").write_text(json.dumps(log, indent=0))
            print(f"step {step}/{total} epoch {epoch} loss {mean:.4f} {elapsed:.0f}s", flush=True)
        if stopped:
            break
    seconds, cpu = time.perf_counter() - start, time.process_time() - cpu
    return {
        "steps": step if batches else 0,
        "planned_steps": total,
        "examples_seen": seen,
        "seconds": round(seconds, 1),
        "examples_per_second": round(seen / max(seconds, 1e-9), 2),
        "cpu_seconds": round(cpu, 1),  # the process's CPU time: on a shared machine, seen / (cpu / cores) is the
        "examples_per_cpu_second": round(seen / max(cpu, 1e-9), 3),  # rate the cores would give it alone
        "stopped_by_budget": stopped,
    }


def versions() -> dict[str, str]:
    import onnx
    import onnxruntime
    import torch
    import transformers

    return {
        "python": platform.python_version(),
        "torch": torch.__version__,
        "transformers": transformers.__version__,
        "onnx": onnx.__version__,
        "onnxruntime": onnxruntime.__version__,
    }
