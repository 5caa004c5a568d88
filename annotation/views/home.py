"""The landing page: what each role can open."""

from django.contrib.auth.decorators import login_required
from django.shortcuts import render

from annotation.models import Dataset, Run
from annotation.selectors.queue_list import queues_for_user


@login_required
def home(request):
    """Links to the pages the user's roles open, with the datasets and runs at a glance."""
    return render(
        request,
        "home.html",
        {
            "datasets": Dataset.objects.all()[:50],
            "runs": Run.objects.all()[:20],
            "my_queues": [r for r in queues_for_user(request.user) if r["member"]],
        },
    )
