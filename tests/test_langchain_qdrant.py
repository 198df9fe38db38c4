"""LangChain's QdrantVectorStore, unchanged, against strata-server and against Qdrant's local mode.

The store creates its collection with vectors {"": ...} and sparse_vectors {} and gives
documents UUID ids by default: every step must answer as it does on QdrantClient(":memory:").
langchain-qdrant is in the test extra; the test skips only where it cannot be installed.
"""

from __future__ import annotations

import uuid

import pytest
from server_process import BINARY, free_port, running_server

langchain_qdrant = pytest.importorskip("langchain_qdrant")
from langchain_core.documents import Document  # noqa: E402
from langchain_core.embeddings import DeterministicFakeEmbedding  # noqa: E402

pytestmark = pytest.mark.skipif(
    not BINARY.is_file(), reason="strata-server binary not in the package"
)

TEXTS = [f"document {i} about {['cats', 'dogs', 'birds'][i % 3]}" for i in range(12)]


def _steps(**where):
    embedding = DeterministicFakeEmbedding(size=16)
    store = langchain_qdrant.QdrantVectorStore.from_texts(
        TEXTS,
        embedding,
        metadatas=[{"i": i} for i in range(len(TEXTS))],
        collection_name="lc",
        **where,
    )
    added = store.add_documents(
        [Document(page_content=f"extra {i}", metadata={"extra": i}) for i in range(4)]
    )
    hits = store.similarity_search_with_score("document 4 about cats", k=4)
    got = store.get_by_ids(added[:2])
    store.delete(added[:1])
    after = store.similarity_search_with_score("extra 0", k=3)
    return {
        "ids_are_uuids": all(uuid.UUID(i) for i in added),
        "hits": [(d.page_content, d.metadata.get("i"), round(s, 4)) for d, s in hits],
        # The ids are random UUIDs: each run's own, so compared as "the ones asked for".
        "got": sorted(
            (
                d.page_content,
                d.metadata["_id"] in added[:2],
                {k: v for k, v in d.metadata.items() if k != "_id"},
            )
            for d in got
        ),
        "after": [(d.page_content, round(s, 4)) for d, s in after],
    }


def test_langchain_store_answers_as_on_qdrant_local_mode(tmp_path):
    reference = _steps(location=":memory:")
    port = free_port()
    with running_server(tmp_path / "data", "--qdrant-addr", f"127.0.0.1:{port}"):
        got = _steps(url=f"http://127.0.0.1:{port}")
    assert got == reference
    assert got["ids_are_uuids"] and len(got["hits"]) == 4 and len(got["after"]) == 3
