"""Every page a role reaches from the navigation renders on the demo data, and no other role's pages open."""

import re

import pytest
from django.core.management import call_command
from django.test import Client

ROLE_USERS = {"expert": "expert", "annotator": "annotator", "adjudicator": "adjudicator", "engineer": "engineer"}


@pytest.fixture
def demo(db):
    call_command("seed_demo", verbosity=0, stdout=__import__("io").StringIO())


def links(html: str) -> list[str]:
    return sorted(
        {h for h in re.findall(r'href="(/[^"#?]*)"', html) if not h.startswith(("/static/", "/admin/", "/api/"))}
    )


@pytest.mark.django_db
@pytest.mark.parametrize("role", sorted(ROLE_USERS))
def test_pages_reachable_from_home_render_for_each_role(demo, role):
    from django.contrib.auth import get_user_model

    client = Client()
    client.force_login(get_user_model().objects.get(username=ROLE_USERS[role]))
    home = client.get("/")
    assert home.status_code == 200
    seen, frontier = set(), links(home.content.decode())
    while frontier and len(seen) < 60:
        url = frontier.pop()
        if url in seen or url.startswith(("/logout",)):
            continue
        seen.add(url)
        response = client.get(url)
        assert response.status_code in (200, 302), f"{role}: {url} answered {response.status_code}"
        if response.status_code == 200 and "text/html" in response["Content-Type"]:
            frontier.extend(u for u in links(response.content.decode()) if u not in seen)
    assert len(seen) >= 3, seen


@pytest.mark.django_db
def test_annotators_are_kept_off_expert_and_engineer_pages(demo):
    from django.contrib.auth import get_user_model

    client = Client()
    client.force_login(get_user_model().objects.get(username="ann1"))
    for url in ["/datasets/", "/corpus/", "/tagging/", "/runs/", "/compare/", "/series/", "/judges/"]:
        assert client.get(url).status_code == 403, url


@pytest.mark.django_db
def test_adjudicators_are_offered_and_reach_adjudication_and_statistics_not_runs_or_judges(demo):
    from django.contrib.auth import get_user_model

    from annotation.models import Queue

    client = Client()
    client.force_login(get_user_model().objects.get(username="adjudicator"))
    home = client.get("/").content.decode()
    offered = links(home)
    for url in ("/runs/", "/compare/", "/series/", "/judges/"):
        assert url not in offered, url
        assert client.get(url).status_code == 403, url
    assert "/queues/" in offered and "demo-rag" not in home
    queue = Queue.objects.get()
    for url in ("/queues/", f"/queues/{queue.pk}/stats/", f"/queues/{queue.pk}/adjudicate/", "/audits/"):
        assert client.get(url).status_code == 200, url


@pytest.mark.django_db
def test_the_demo_puts_only_annotators_in_pools(demo):
    from annotation.models import QueueMember
    from evalapp.roles import ANNOTATOR, user_roles

    members = list(QueueMember.objects.select_related("user"))
    assert members and all(ANNOTATOR in user_roles(m.user) for m in members)
