"""add_user --password runs Django's password validators; a refused password writes nothing."""
import json

import pytest
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from annotation.services.users import user_upsert
from tests.conftest import run_cmd


def roles_of(username: str) -> list[str]:
    return sorted(get_user_model().objects.get(username=username).groups.values_list("name", flat=True))


@pytest.mark.django_db
@pytest.mark.parametrize("password, rule", [
    ("Xk9#q", "MinimumLengthValidator"),
    ("password123", "CommonPasswordValidator"),
    ("4830591726", "NumericPasswordValidator"),
    ("marguerite1", "UserAttributeSimilarityValidator"),
])
def test_a_weak_password_exits_2_naming_the_rule_and_creates_no_user(password, rule):
    code, out, err = run_cmd("add_user", "marguerite", "--role", "engineer", "--password", password, "--json")

    assert code == 2
    payload = json.loads(out)
    assert payload["error"] == "the password is refused; nothing was written"
    assert {p["field"] for p in payload["problems"]} == {"password"}
    assert any(p["message"].endswith(f"[{rule}]") for p in payload["problems"]), payload
    assert rule in err
    assert not get_user_model().objects.filter(username="marguerite").exists()
    assert not Group.objects.exists()


@pytest.mark.django_db
def test_every_broken_rule_is_listed():
    code, out, _ = run_cmd("add_user", "bob", "--role", "engineer", "--password", "1234", "--json")

    assert code == 2
    rules = sorted(p["message"].rsplit("[", 1)[1].rstrip("]") for p in json.loads(out)["problems"])
    assert rules == ["CommonPasswordValidator", "MinimumLengthValidator", "NumericPasswordValidator"]


@pytest.mark.django_db
def test_a_refused_password_leaves_an_existing_user_as_it_was():
    run_cmd("add_user", "carol", "--role", "annotator", "--password", "tulip-harbour-52")
    User = get_user_model()
    before = User.objects.get(username="carol").password

    code, _, err = run_cmd("add_user", "carol", "--role", "engineer", "--role", "expert", "--password", "carol")

    assert code == 2 and "UserAttributeSimilarityValidator" in err and "MinimumLengthValidator" in err
    carol = User.objects.get(username="carol")
    assert carol.password == before and carol.check_password("tulip-harbour-52")
    assert roles_of("carol") == ["annotator"]
    assert sorted(Group.objects.values_list("name", flat=True)) == ["annotator"]


@pytest.mark.django_db
def test_a_good_password_is_set():
    code, out, _ = run_cmd("add_user", "dave", "--role", "engineer", "--password", "tulip-harbour-52", "--json")

    assert code == 0 and json.loads(out)["roles"] == ["engineer"]
    assert get_user_model().objects.get(username="dave").check_password("tulip-harbour-52")


@pytest.mark.django_db
def test_the_demo_path_sets_a_password_the_validators_would_refuse():
    with pytest.raises(Exception) as refused:
        user_upsert(username="expert", roles=["expert"], password="demo-expert")
    assert "UserAttributeSimilarityValidator" in str(refused.value)

    user_upsert(username="expert", roles=["expert"], password="demo-expert", validate_password=False)

    assert get_user_model().objects.get(username="expert").check_password("demo-expert")


def test_settings_use_the_four_standard_validators(settings):
    assert [v["NAME"].rsplit(".", 1)[1] for v in settings.AUTH_PASSWORD_VALIDATORS] == [
        "UserAttributeSimilarityValidator", "MinimumLengthValidator", "CommonPasswordValidator",
        "NumericPasswordValidator"]
