"""Issue 18, item 4: no cross-site or other-port form posts, no DNS rebinding, a JSON-only API."""

from __future__ import annotations

import pytest
from fastapi.testclient import TestClient

from app.settings import Settings
from app.web import create_app

OTHER_ORIGINS = ["http://evil.example", "http://127.0.0.1:9999", "http://localhost:8000", "null"]


@pytest.fixture
def client(tmp_path, tiny_db):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline",
                        allowed_hosts=["127.0.0.1", "localhost"])
    with TestClient(create_app(settings), base_url="http://127.0.0.1:8000") as client:
        yield client


def _forms(client) -> list[tuple[str, str, dict]]:
    thread_id = client.post("/api/conversations", json={"title": "mine"}).json()["thread_id"]
    return [("POST", "/ask", {"data": {"question": "How many sites?"}}),
            ("POST", f"/c/{thread_id}/edit", {"data": {"title": "renamed"}}),
            ("POST", f"/c/{thread_id}/delete", {}),
            ("POST", "/memories/erase", {}),
            ("POST", "/import", {"files": {"file": ("a.json", b"{}", "application/json")}}),
            ("DELETE", f"/api/conversations/{thread_id}", {})]


@pytest.mark.parametrize("origin", OTHER_ORIGINS)
def test_a_form_post_from_another_origin_is_refused(client, origin):
    for method, path, kwargs in _forms(client):
        response = client.request(method, path, headers={"Origin": origin}, **kwargs)
        assert response.status_code == 403, (path, origin)
        if path.startswith("/api/"):
            assert response.json()["error"] == "CrossOriginRequest"
        else:  # a browser's form post gets the error page, in the shape of every other error
            assert response.headers["content-type"].startswith("text/html")
            assert "use askdb&#39;s own pages" in response.text
    assert client.get("/api/conversations").json()["count"] == 1  # nothing was created, renamed or deleted


@pytest.mark.parametrize("site", ["cross-site", "same-site"])
def test_sec_fetch_site_other_than_same_origin_is_refused(client, site):
    """same-site covers another port of the same host: a page on :9000 posting to askdb on :8000."""
    response = client.post("/ask", data={"question": "q"}, headers={"Sec-Fetch-Site": site})
    assert response.status_code == 403


def test_the_apps_own_pages_may_post(client):
    own = {"Origin": "http://127.0.0.1:8000", "Sec-Fetch-Site": "same-origin"}
    response = client.post("/ask", data={"question": "How many sites?"}, headers=own, follow_redirects=False)
    assert response.status_code == 303


def test_unknown_hosts_are_not_served(client):
    """DNS rebinding: attacker.example resolving to 127.0.0.1 reaches the server with its own Host."""
    for host in ("attacker.example", "attacker.example:8000", "127.0.0.1.evil.example"):
        response = client.get("/api/conversations", headers={"Host": host})
        assert response.status_code == 400 and response.json()["error"] == "HostNotAllowed"
    assert client.get("/api/conversations", headers={"Host": "localhost:8000"}).status_code == 200
    page = client.get("/", headers={"Host": "attacker.example", "Accept": "text/html"})
    assert page.status_code == 400 and "ASKDB_ALLOWED_HOSTS" in page.text and "<html" in page.text


def test_the_api_takes_only_json(client):
    for content_type in ("text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"):
        response = client.post("/api/conversations", content=b'{"title": "x"}', headers={"Content-Type": content_type})
        assert response.status_code == 415, content_type
    assert client.get("/api/conversations").json()["count"] == 0


def test_any_host_when_configured(tmp_path, tiny_db):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline", allowed_hosts=["*"])
    with TestClient(create_app(settings)) as client:
        assert client.get("/healthz", headers={"Host": "askdb.internal"}).status_code == 200


def test_every_reply_forbids_framing_and_names_what_pages_may_load(client):
    for path in ("/", "/api/conversations", "/no-such-page", "/static/askdb.css"):
        response = client.get(path)
        assert response.headers["x-frame-options"] == "DENY", path
        policy = response.headers["content-security-policy"]
        assert "frame-ancestors 'none'" in policy and "script-src 'self';" in policy, path
        assert response.headers["x-content-type-options"] == "nosniff"


def test_an_operator_who_embeds_askdb_names_the_sites_that_may_frame_it(tmp_path, tiny_db):
    settings = Settings(database=tiny_db, store=tmp_path / "store.db", llm="offline",
                        frame_ancestors=["https://intranet.example.com"])
    with TestClient(create_app(settings), base_url="http://127.0.0.1") as client:
        response = client.get("/")
    assert "frame-ancestors https://intranet.example.com" in response.headers["content-security-policy"]
    assert "x-frame-options" not in response.headers


@pytest.mark.parametrize("site, mode, path, status", [
    ("cross-site", "no-cors", "/sql?sql=SELECT%201", 403),  # an <img> on another site
    ("same-site", "cors", "/api/conversations", 403),  # fetch() from another port of this host
    ("cross-site", "navigate", "/sql?sql=SELECT%201", 200),  # a link the user follows
    ("same-origin", "cors", "/api/conversations", 200),  # askdb's own script
    ("cross-site", "no-cors", "/static/askdb.css", 200),
])
def test_a_read_another_sites_page_makes_without_a_navigation_is_refused(client, site, mode, path, status):
    response = client.get(path, headers={"Sec-Fetch-Site": site, "Sec-Fetch-Mode": mode})
    assert response.status_code == status
    if status == 403:
        assert "open askdb itself" in response.text
