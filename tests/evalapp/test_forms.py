"""Form refusals on pages are sentences a person reads: the field named as the page names it, what it must
be, and never Python's or Django's own wording ("field 'n':", "Enter a whole number.", "This field is
required.")."""

import pytest
from django import forms
from django.test import Client

from annotation.forms import QueueForm
from annotation.models import Queue
from calibration.forms import DisagreementFilterForm
from comparisons.forms import PlannerForm
from evalapp.errors import ServiceError
from evalapp.forms import PageForm, page_text


def refusal(form) -> str:
    with pytest.raises(ServiceError) as caught:
        form.parsed("bad planner input")
    return page_text(caught.value)


def test_a_number_that_is_not_one_names_the_field_and_its_range():
    assert (
        refusal(PlannerForm({"n": "abc"}))
        == "Bad planner input: the set size must be a whole number from 1 to 1,000,000,000."
    )


def test_every_problem_is_said_in_one_sentence_each_field_by_its_label():
    text = refusal(PlannerForm({"n": "0", "discordant_rate": "2"}))
    assert text == (
        "Bad planner input: the set size must be a whole number from 1 to 1,000,000,000; "
        "the discordance rate must be a number from 0.0001 to 1."
    )


def test_a_choice_outside_the_list_says_which_values_are_allowed():
    text = refusal(DisagreementFilterForm({"direction": "sideways"}))
    assert text == (
        "Bad planner input: the direction must be one of judge_passes, judge_fails, invalid (or empty), not 'sideways'."
    )


def test_required_and_too_long_are_sentences_not_djangos_wording():
    class Named(PageForm):
        name = forms.CharField(max_length=5)

    assert refusal(Named({})) == "Bad planner input: the name is required."
    assert (
        refusal(Named({"name": "abcdefgh"})) == "Bad planner input: the name must be at most 5 characters (it has 8)."
    )


def test_a_refusal_without_problems_is_its_message_as_a_sentence():
    assert page_text(ServiceError("unknown run 'x'")) == "Unknown run 'x'."


@pytest.mark.django_db
def test_the_queue_page_says_the_sample_size_in_a_sentence_and_writes_nothing(make_user):
    make_user("eng", "engineer", password="pw-" + "x" * 8)
    client = Client()
    client.login(username="eng", password="pw-" + "x" * 8)
    response = client.post("/queues/new/", {"name": "q", "run_id": "r", "sample": "ten"})
    html = response.content.decode()
    assert response.status_code == 200
    assert (
        "Cannot create the queue; nothing was written: the sample size must be a whole number from 1 to 1,000,000."
        in html
    )
    assert "field &#x27;" not in html and "field '" not in html
    assert Queue.objects.count() == 0


@pytest.mark.django_db
def test_the_planner_fragment_says_it_in_a_sentence(make_user):
    make_user("eng", "engineer", password="pw-" + "x" * 8)
    client = Client()
    client.login(username="eng", password="pw-" + "x" * 8)
    response = client.get("/compare/planner/?n=abc")
    assert response.status_code == 400
    assert (
        "Bad planner input: the set size must be a whole number from 1 to 1,000,000,000." in response.content.decode()
    )


def test_the_queue_form_labels_read_as_the_page_reads():
    assert refusal(QueueForm({"overlap": "11"})).endswith(
        "the overlap (annotators per item) must be a whole number from 1 to 10."
    )
