"""The experts' traffic page: the coverage table with the unclassified row always, the rounds-to-none
warnings, manual assignment and "Propose K to tag" (the proposals then show "from traffic" in the
tagging list); a bad form says what is wrong and changes nothing."""

import pytest

from annotation.models import TrafficQuestion, WorkingExample
from tests.annotation.selectors.test_traffic_coverage import classified_world
from tests.annotation.traffic_world import traffic_world
from tests.machine_numbers import assert_machine_numbers_plain, page_in_german

pytestmark = pytest.mark.django_db


@pytest.fixture
def expert(client, make_user):
    client.force_login(make_user("eve", "expert"))
    return client


def test_the_page_shows_every_stratum_the_unclassified_row_and_the_warnings(tmp_path, expert):
    classified_world(tmp_path)
    page = expert.get("/tagging/shop/traffic/?n=5").content.decode()
    assert 'data-stratum="billing"' in page and 'data-stratum="account"' in page and 'data-stratum="other"' in page
    assert '<tr class="unclassified" data-stratum="">' in page
    assert '22.2% <span class="muted">(2)</span>' in page
    assert "stratum &#x27;account&#x27;: 5 x 0.111111 = 0.555556 &lt; 1" in page
    assert page.count("rounds to none</span>") == 2
    assert "Is there a student discount?" in page and "hello" in page
    assert "Do you ship to Norway?" not in page  # assigned by hand: no longer unclassified


def test_the_tagging_list_links_the_page(tmp_path, expert):
    traffic_world(tmp_path)
    assert 'href="/tagging/shop/traffic/" id="traffic-link"' in expert.get("/tagging/shop/").content.decode()


def test_assign_then_propose_from_the_page(tmp_path, expert):
    classified_world(tmp_path)
    hello = TrafficQuestion.objects.get(text="hello")
    done = expert.post(
        "/tagging/shop/traffic/", {"action": "assign", "ids": [hello.pk], "stratum": "other"}, follow=True
    )
    assert "1 question assigned to other." in done.content.decode()
    assert TrafficQuestion.objects.get(pk=hello.pk).stratum_source == "manual"
    proposed = expert.post("/tagging/shop/traffic/", {"action": "propose", "k": 2, "seed": 4}, follow=True)
    assert "2 traffic questions added to the tagging list" in proposed.content.decode()
    assert WorkingExample.objects.count() == 2
    listing = expert.get("/tagging/shop/?status=untagged").content.decode()
    assert listing.count('<span class="badge from-traffic">from traffic</span>') == 2


def test_a_rule_added_from_the_page_classifies_the_matching_questions_at_once(tmp_path, expert):
    from annotation.models import TrafficRule

    classified_world(tmp_path)
    rules = TrafficRule.objects.count()
    done = expert.post(
        "/tagging/shop/traffic/",
        {"action": "rule", "kind": "keyword", "pattern": "discount", "stratum": "other", "priority": "5"},
        follow=True,
    ).content.decode()
    assert "Rule added: keyword &#x27;discount&#x27; -&gt; other; 1 question reclassified." in done
    rule = TrafficRule.objects.get(pattern="discount")
    assert (TrafficRule.objects.count(), rule.kind, rule.stratum, rule.priority) == (rules + 1, "keyword", "other", 5)
    student = TrafficQuestion.objects.get(text="Is there a student discount?")
    assert (student.stratum, student.stratum_source, student.rule_id) == ("other", "rule", rule.pk)
    assert "Is there a student discount?" not in expert.get("/tagging/shop/traffic/").content.decode()


@pytest.mark.parametrize(
    "body, message",
    [
        ({"action": "propose", "k": 0}, "must be a whole number from 1 to 1,000"),
        ({"action": "assign", "stratum": "other"}, "tick at least one question"),
        ({"action": "assign", "ids": ["999999"], "stratum": "other"}, "must be questions listed on the page"),
        ({"action": "assign", "ids": ["1"], "stratum": "shipping"}, "outside the dataset"),
        ({"action": "rule", "kind": "regex", "pattern": "(unclosed", "stratum": "other"}, "pattern"),
        ({"action": "rule", "kind": "keyword", "pattern": "x", "stratum": "shipping"}, "outside the dataset"),
        ({"action": "rule", "kind": "glob", "pattern": "x", "stratum": "other"}, "kind"),
    ],
)
def test_a_bad_form_says_what_is_wrong_and_changes_nothing(tmp_path, expert, body, message):
    classified_world(tmp_path)
    if body.get("ids") == ["1"]:
        body["ids"] = [str(TrafficQuestion.objects.get(text="hello").pk)]
    from annotation.models import TrafficRule

    before = list(TrafficQuestion.objects.order_by("id").values_list("stratum", "stratum_source", "proposed_qid"))
    rules = list(TrafficRule.objects.values_list("pk", flat=True))
    page = expert.post("/tagging/shop/traffic/", body, follow=True).content.decode()
    assert message in page
    after = list(TrafficQuestion.objects.order_by("id").values_list("stratum", "stratum_source", "proposed_qid"))
    assert after == before and WorkingExample.objects.count() == 0
    assert list(TrafficRule.objects.values_list("pk", flat=True)) == rules


def test_a_bad_n_is_said_and_the_set_size_is_used(tmp_path, expert):
    classified_world(tmp_path)
    page = expert.get("/tagging/shop/traffic/?n=-3").content.decode()
    assert (
        "The sample size is not valid; the set&#x27;s size is used: the sample size must be a whole number from 0 to 1,000,000."
        in page
    )
    assert "Expected in 3" in page


def test_the_bars_draw_in_german_too(tmp_path, expert):
    """A share of 22.2 % is a bar 22.2 wide, never "22,2" (no width at all) where the page renders in German."""
    classified_world(tmp_path)
    page = page_in_german(expert, "/tagging/shop/traffic/", {"n": 5})
    assert_machine_numbers_plain(page, at_least=10)
    assert '<rect width="22.2" height="1">' in page
