"""The relabel audit pages."""
import pytest

from annotation.models import Answer
from tests.annotation.views.conftest import client_for


@pytest.mark.django_db
def test_audit_pages(make_run, pool):
    from annotation.services.audits import audit_create
    from annotation.services.labels import label_write

    run_id = make_run(3)
    for answer in Answer.objects.filter(run__run_id=run_id):
        label_write(answer=answer, annotator=pool["ann1"], verdict="incorrect")
        label_write(answer=answer, annotator=pool["ann1"], verdict="correct")
    audit = audit_create(name="session", auditors=["ann2"], changed_by="ann1")
    c = client_for(pool["eng"])
    assert "session" in c.get("/audits/").content.decode()
    html = c.get(f"/audits/{audit.pk}/").content.decode()
    assert "0 of 3 sampled" in html and "Waiting for the blind labels." in html
