"""``/docs`` (Swagger UI) and ``/redoc`` (ReDoc) from the copies packaged in ``fastapi-offline`` (the ``serve``
extra), served under ``/docs-static``: FastAPI's own pages load their scripts from a CDN and stay blank where the
API runs without internet (a hospital network, an air-gapped site). Nothing on either page leaves the server: no
CDN, no Google fonts, no online validator badge, and a Content-Security-Policy keeps the browser from fetching
anything elsewhere (ReDoc's sidebar asks cdn.redoc.ly for its logo)."""

from __future__ import annotations

from importlib.resources import files

from fastapi import FastAPI, Request
from fastapi.openapi.docs import get_redoc_html, get_swagger_ui_html
from fastapi.responses import HTMLResponse
from fastapi.staticfiles import StaticFiles

STATIC = "/docs-static"
# The pages' own inline start-up script and styles, their images as data: URLs, ReDoc's search worker from a blob.
POLICY = (
    "default-src 'self'; script-src 'self' 'unsafe-inline'; style-src 'self' 'unsafe-inline'; "
    "img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; frame-ancestors 'self'"
)


def mount_docs(app: FastAPI) -> None:
    """Add ``/docs``, ``/redoc`` and their files to ``app`` (created with ``docs_url=None, redoc_url=None``)."""
    app.mount(STATIC, StaticFiles(directory=str(files("fastapi_offline").joinpath("static"))), name="docs-static")

    @app.get("/docs", include_in_schema=False)
    async def swagger(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _local(
            get_swagger_ui_html(
                openapi_url=f"{root}{app.openapi_url}",
                title=f"{app.title} - API documentation",
                swagger_js_url=f"{root}{STATIC}/swagger-ui-bundle.js",
                swagger_css_url=f"{root}{STATIC}/swagger-ui.css",
                swagger_favicon_url=f"{root}{STATIC}/favicon.png",
                oauth2_redirect_url=None,
                swagger_ui_parameters={"validatorUrl": None},  # the badge would call validator.swagger.io
            )
        )

    @app.get("/redoc", include_in_schema=False)
    async def redoc(request: Request) -> HTMLResponse:
        root = request.scope.get("root_path", "")
        return _local(
            get_redoc_html(
                openapi_url=f"{root}{app.openapi_url}",
                title=f"{app.title} - API documentation",
                redoc_js_url=f"{root}{STATIC}/redoc.standalone.js",
                redoc_favicon_url=f"{root}{STATIC}/favicon.png",
                with_google_fonts=False,
            )
        )


def _local(page: HTMLResponse) -> HTMLResponse:
    page.headers["Content-Security-Policy"] = POLICY
    return page
