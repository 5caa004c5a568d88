"""Field helpers of the output serializers: the shapes the payloads repeat (intervals, count maps, qid lists)."""

from typing import Any

from rest_framework import serializers


def interval(**kwargs: Any) -> serializers.ListField:
    """A 95% interval as [low, high]."""
    return serializers.ListField(child=serializers.FloatField(), min_length=2, max_length=2, **kwargs)


def counts(**kwargs: Any) -> serializers.DictField:
    """A map from a name (a stratum, a label pair, a reason) to a count."""
    return serializers.DictField(child=serializers.IntegerField(), **kwargs)


def shares(**kwargs: Any) -> serializers.DictField:
    """A map from a name to a number (a share, a sum, a contribution)."""
    return serializers.DictField(child=serializers.FloatField(), **kwargs)


def names(**kwargs: Any) -> serializers.ListField:
    """A list of names: qids, usernames, run ids, strata."""
    return serializers.ListField(child=serializers.CharField(allow_blank=True), **kwargs)


def number(**kwargs: Any) -> serializers.FloatField:
    """A figure that is null where it is undefined (an empty sample, one class only)."""
    return serializers.FloatField(allow_null=True, **kwargs)


def text(**kwargs: Any) -> serializers.CharField:
    """A string that may be empty or null."""
    return serializers.CharField(allow_null=True, allow_blank=True, **kwargs)


def declare(
    serializer_class: type[serializers.Serializer[Any]], **fields: serializers.Field[Any, Any, Any, Any]
) -> type[serializers.Serializer[Any]]:
    """Add fields whose names are not Python identifiers (`from`) to a serializer class; returns it."""
    serializer_class._declared_fields.update(fields)
    return serializer_class
