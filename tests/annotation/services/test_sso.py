"""Which account a provider-verified sign-in is for, its roles, and the refusals (403, nothing written);
the role map's parsing and the start-up check."""

import pytest
from django.contrib.auth import get_user_model
from django.core.exceptions import ImproperlyConfigured

from annotation.checks import sso_role_map_check
from annotation.services.sso import sso_sign_in
from annotation.sso import mapped_roles, role_map
from evalapp.errors import ServiceError
from evalapp.roles import user_roles


def snapshot():
    User = get_user_model()
    return (
        sorted(User.objects.values_list("username", "email", "password", "is_active")),
        sorted(User.groups.through.objects.values_list("user__username", "group__name")),
    )


def refusal(**kwargs) -> ServiceError:
    with pytest.raises(ServiceError) as caught:
        sso_sign_in(**{"email": "x@example.org", "roles": {"annotator"}, **kwargs})
    assert caught.value.status == 403
    return caught.value


def test_role_map_reads_groups_repeated_for_several_roles():
    assert role_map(" a=engineer , b=annotator,b=adjudicator,,/team=x=expert ") == {
        "a": frozenset({"engineer"}),
        "b": frozenset({"annotator", "adjudicator"}),
        "/team=x": frozenset({"expert"}),
    }
    assert role_map("") == {}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("a=engineer,b", "OIDC_ROLE_MAP entry 2 ('b') must read provider-group=role."),
        ("=engineer", "OIDC_ROLE_MAP entry 1 ('=engineer') must read provider-group=role."),
        (
            "a=boss",
            "OIDC_ROLE_MAP entry 1 ('a=boss'): unknown role 'boss'; expected one of expert, annotator, adjudicator, engineer.",
        ),
    ],
)
def test_role_map_names_the_wrong_entry(text, message):
    with pytest.raises(ImproperlyConfigured) as caught:
        role_map(text)
    assert str(caught.value) == message


def test_mapped_roles_from_a_list_a_string_or_nothing():
    mapping = role_map("eng=engineer,ann=annotator,ann=adjudicator")
    assert mapped_roles({"groups": ["ann", "other", 7]}, "groups", mapping) == {"annotator", "adjudicator"}
    assert mapped_roles({"groups": "eng"}, "groups", mapping) == {"engineer"}
    assert mapped_roles({"roles": ["eng"]}, "groups", mapping) == set()
    assert mapped_roles({"groups": {"eng": True}}, "groups", mapping) == set()


def test_the_start_up_check_names_a_bad_map(settings):
    settings.OIDC_ENABLED = True
    settings.OIDC_ROLE_MAP = "a=boss"
    assert [(e.id, e.msg) for e in sso_role_map_check()] == [
        (
            "annotation.E001",
            "OIDC_ROLE_MAP entry 1 ('a=boss'): unknown role 'boss'; expected one of expert, annotator, adjudicator, engineer.",
        )
    ]
    settings.OIDC_ROLE_MAP = ""
    assert [e.id for e in sso_role_map_check()] == ["annotation.E002"]
    settings.OIDC_ROLE_MAP = "a=engineer"
    assert sso_role_map_check() == []
    settings.OIDC_ENABLED = False
    settings.OIDC_ROLE_MAP = "a=boss"
    assert sso_role_map_check() == []


@pytest.mark.django_db
def test_a_new_user_gets_exactly_the_roles_and_no_password():
    user = sso_sign_in(username="nina", email="nina@example.org", roles={"engineer", "expert"})

    assert (user.username, user.email, user.has_usable_password()) == ("nina", "nina@example.org", False)
    assert user_roles(get_user_model().objects.get(pk=user.pk)) == {"engineer", "expert"}


@pytest.mark.django_db
def test_an_account_without_a_password_is_signed_in_whatever_its_email(make_user):
    from annotation.services.users import user_upsert

    user_upsert(username="olga", roles=["expert"])  # add_user without --password: no password to take over

    user = sso_sign_in(username="OLGA", email="olga@example.org", roles={"annotator"})

    assert user.username == "olga" and user.email == "olga@example.org"
    assert sorted(user.groups.values_list("name", flat=True)) == ["annotator"]


@pytest.mark.django_db
def test_link_by_username_takes_over_a_password_account(make_user):
    make_user("pete", "engineer")

    user = sso_sign_in(username="pete", email="p@example.org", roles={"annotator"}, link_by_username=True)

    assert user.email == "p@example.org" and sorted(user.groups.values_list("name", flat=True)) == ["annotator"]


@pytest.mark.django_db
def test_a_password_account_without_an_email_is_not_matched_by_an_empty_one(make_user):
    make_user("quin", "engineer")
    before = snapshot()

    exc = refusal(username="quin", email="")

    assert exc.message == "this user name belongs to an account that signs in with a password"
    assert snapshot() == before


@pytest.mark.django_db
def test_an_inactive_account_stays_off(make_user):
    user = make_user("rosa", "engineer")
    user.email = "x@example.org"
    user.is_active = False
    user.save()
    before = snapshot()

    exc = refusal(username="rosa")

    assert (exc.message, exc.problems[0].message) == (
        "this account is switched off",
        "'rosa' is inactive; an engineer can switch it on",
    )
    assert snapshot() == before


@pytest.mark.django_db
def test_two_accounts_equal_but_for_case_are_refused(make_user):
    make_user("Sam", "engineer")
    make_user("SAM", "engineer")
    before = snapshot()

    exc = refusal(username="sam")

    assert exc.problems[0].message == "'Sam' and 'SAM' differ only by case; an engineer must rename one"
    assert snapshot() == before


@pytest.mark.django_db
@pytest.mark.parametrize(
    ("username", "roles", "field", "problem"),
    [
        ("", {"annotator"}, "username", "the claim is empty or missing"),
        ("a b", {"annotator"}, "username", "'a b' may hold only letters, digits and @ . + - _"),
        ("t" * 151, {"annotator"}, "username", "is 151 characters long; at most 150 are allowed"),
        (
            "tess",
            set(),
            "roles",
            "none of your groups is mapped to a role (OIDC_ROLE_MAP); ask an engineer to add you to one",
        ),
    ],
)
def test_unusable_sign_ins_are_refused_with_nothing_written(username, roles, field, problem):
    exc = refusal(username=username, roles=roles)

    assert (exc.problems[0].field, exc.problems[0].message) == (field, problem)
    assert get_user_model().objects.count() == 0
