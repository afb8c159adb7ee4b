"""memory.embeddings.embedder_of: code handed only an embedder's bound method (whisper's Deps.embed) reads the model's
id and batches through the embedder's public interface, not by poking the method's object."""

from memory import runtime
from memory.embeddings import HashEmbedder, embedder_of


def test_the_real_embedders_bound_query_method_gives_back_the_embedder_and_its_model_id():
    embedder = runtime.embedder()
    assert embedder_of(embedder.embed_query) is embedder
    assert embedder_of(embedder.embed_query).model_id.startswith("ormah/all-MiniLM-L6-v2-int8@")


def test_a_plain_function_has_no_embedder():
    fake = HashEmbedder()
    assert embedder_of(lambda text: fake.embed_query(text)) is None


def test_a_method_of_an_object_that_is_no_embedder_has_none():
    class Counter:
        def embed_query(self, text):
            return text

    assert embedder_of(Counter().embed_query) is None
