"""Helpers shared by the service tests of the annotation app."""
from annotation.models import Queue, QueueItem, QueueMember


def _counts():
    return Queue.objects.count(), QueueItem.objects.count(), QueueMember.objects.count()
