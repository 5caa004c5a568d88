"""Values joined by the database (evalapp.db) are the column, whatever separator a value holds."""

import pytest

from tests.comparisons.support import (
    import_questions,
    import_run,
    q,
    qids,
)

pytestmark = pytest.mark.django_db


def test_joined_values_are_the_column_and_survive_a_value_holding_the_separator(tmp_path):
    from annotation.models import Answer, Run
    from evalapp.db import column_strings, column_strings_by

    v = import_questions(tmp_path, "support", [q(i) for i in qids(30)], "v1")
    import_run(
        tmp_path,
        run_id="A",
        system="s",
        dataset="support",
        dataset_hash=v["dataset_hash"],
        correct={i: (None if n % 7 == 0 else n % 3 != 0) for n, i in enumerate(qids(30))},
    )
    answers = Answer.objects.filter(run__run_id="A")
    assert sorted(column_strings(answers, "qid")) == sorted(answers.values_list("qid", flat=True))
    grouped = column_strings_by(answers, "correct", "qid")
    assert {k: sorted(v) for k, v in grouped.items()} == {
        True: sorted(answers.filter(correct=True).values_list("qid", flat=True)),
        False: sorted(answers.filter(correct=False).values_list("qid", flat=True)),
        None: sorted(answers.filter(correct__isnull=True).values_list("qid", flat=True)),
    }
    assert column_strings(answers.filter(qid="no such qid"), "qid") == []
    assert column_strings_by(answers.filter(qid="no such qid"), "correct", "qid") == {}

    # A value holding the separator cannot split into extra values: the rows are read instead.
    Answer.objects.create(run=Run.objects.get(run_id="A"), qid="odd\x1fqid", correct=True)
    assert sorted(column_strings(answers, "qid")) == sorted(answers.values_list("qid", flat=True))
    assert "odd\x1fqid" in column_strings_by(answers, "correct", "qid")[True]


def test_in_values_finds_exactly_the_values_whatever_characters_they_hold():
    from annotation.models import Dataset
    from evalapp.keyset import filter_in_values, ids_in, in_values

    awkward = [
        "plain",
        'quote"d',
        "back\\slash",
        "com,ma",
        "{brace}",
        "sp ace",
        "NULL",
        "",
        "é中\U0001f600",
        "tab\there",
        "new\nline",
        "sep\x1fvalue",
        "'single'",
    ]
    made = {name: Dataset.objects.create(name=name).pk for name in awkward}
    Dataset.objects.create(name="not asked for")
    found = Dataset.objects.filter(name__in=in_values([*awkward, "absent", "plain"]))
    assert sorted(found.values_list("name", flat=True)) == sorted(awkward)
    assert list(Dataset.objects.filter(name__in=in_values([])).values_list("name", flat=True)) == []
    by_id = Dataset.objects.filter(pk__in=ids_in([made["plain"], made["NULL"], 10**9]))
    assert sorted(by_id.values_list("name", flat=True)) == ["NULL", "plain"]
    # The same rows by filter_in_values, which PostgreSQL reads as `= ANY(ARRAY(...))`.
    for wanted in ([*awkward, "absent"], ["plain"], [], ["absent"]):
        got = filter_in_values(Dataset.objects.exclude(name="plain\x1f"), "name", wanted)
        assert sorted(got.values_list("name", flat=True)) == sorted(set(wanted) & set(awkward))


def test_joined_pairs_are_the_two_columns_and_survive_a_value_holding_the_separator():
    from annotation.models import Dataset
    from evalapp.db import column_string_pairs

    names = ["plain", "é中\U0001f600", "new\nline", 'quote"d', ""]
    for name in names:
        Dataset.objects.create(name=name, description=f"about {name}")
    Dataset.objects.create(name="blank")  # description "": an empty second value still pairs
    datasets = Dataset.objects.all()
    assert column_string_pairs(datasets, "name", "description") == {
        **{name: f"about {name}" for name in names},
        "blank": "",
    }
    assert column_string_pairs(datasets.filter(name="no such name"), "name", "description") == {}
    # A value holding the separator would shift every pair after it: the rows are read instead.
    Dataset.objects.create(name="odd", description="one\x1ftwo")
    assert column_string_pairs(datasets, "name", "description") == {
        **{name: f"about {name}" for name in names},
        "blank": "",
        "odd": "one\x1ftwo",
    }


@pytest.mark.parametrize(
    "texts",
    [
        ['{"a":1}', '{"b":"x"}', "[]"],
        ['{"n":1180591620717411303424}', '{"m":2.5}'],  # 2**70 in one text: json reads it, as an integer
        ['{"x":NaN}', '{"y":1}'],  # orjson refuses NaN: json reads it
        ['{"s":"caf\\u00e9 \\ud83d\\ude00"}', '{"t":[1,2.5,true,null,{"a":[]}]}'],
        ["1234567890", "123456789"],  # 19 digits only if the texts ran together: no run of 19 in either
        [],
    ],
)
def test_records_parsed_together_are_what_json_reads_one_by_one(texts):
    import json

    from evalapp.jsonl import loads_exact_all

    found, expected = loads_exact_all(texts), [json.loads(t) for t in texts]
    assert repr(found) == repr(expected)  # the same values and types (an int stays an int, NaN stays NaN)
