from annotation.services.corpus import corpus_import
from evalapp.commands import EvalCommand


class Command(EvalCommand):
    help = "Import corpus documents (JSON Lines); changed documents retire their old chunks."

    def add_command_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--max-chars", type=int, default=1200, help="chunk size cap in characters")

    def run(self, **o):
        return corpus_import(path=o["file"], max_chars=o["max_chars"]).as_dict(), 0

    def text(self, p):
        return f"{p['documents']} documents, {p['chunks']} new chunks, {p['retired']} retired"
