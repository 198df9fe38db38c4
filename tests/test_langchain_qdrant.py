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


# --- SPARSE and HYBRID retrieval modes -------------------------------------------------------

from langchain_qdrant import RetrievalMode, SparseEmbeddings, SparseVector  # noqa: E402
from qdrant_client import models  # noqa: E402

_VOCABULARY = [
    "cats",
    "dogs",
    "birds",
    "fish",
    "sleep",
    "run",
    "fly",
    "swim",
    "eat",
    "play",
    "small",
    "large",
    "fast",
    "slow",
    "red",
    "blue",
    "green",
    "old",
    "young",
    "wild",
]


def _sentences(n: int, seed: int) -> list[str]:
    import random

    rng = random.Random(seed)
    return [" ".join(rng.choice(_VOCABULARY) for _ in range(rng.randint(3, 9))) for _ in range(n)]


class _BagOfWords(SparseEmbeddings):
    """A tiny deterministic sparse encoder: word index -> count / words, times a factor
    within 1 + 1e-6·[0, 10^5) of the text's CRC-32, so that no two texts tie. (Ties are
    ordered arbitrarily by the local mode's np.argsort, so they would compare nothing.)"""

    def _embed(self, text: str) -> SparseVector:
        import zlib

        words = text.split()
        counts: dict[int, int] = {}
        for w in words:
            i = _VOCABULARY.index(w) if w in _VOCABULARY else 100 + len(w)
            counts[i] = counts.get(i, 0) + 1
        factor = 1 + (zlib.crc32(text.encode()) % 100_000) * 1e-6
        # Unsorted on purpose: the store sorts what it keeps.
        indices = sorted(counts, reverse=True)
        return SparseVector(
            indices=indices, values=[counts[i] / len(words) * factor for i in indices]
        )

    def embed_documents(self, texts: list[str]) -> list[SparseVector]:
        return [self._embed(t) for t in texts]

    def embed_query(self, text: str) -> SparseVector:
        return self._embed(text)


def _sparse_steps(mode: RetrievalMode, sparse_params: dict | None, **where):
    texts = _sentences(40, seed=25)
    store = langchain_qdrant.QdrantVectorStore.from_texts(
        texts,
        DeterministicFakeEmbedding(size=16) if mode == RetrievalMode.HYBRID else None,
        metadatas=[{"i": i} for i in range(len(texts))],
        collection_name="lc_" + mode.value,
        retrieval_mode=mode,
        sparse_embedding=_BagOfWords(),
        sparse_vector_params=sparse_params,
        **where,
    )
    added = store.add_documents(
        [
            Document(page_content=s, metadata={"extra": i})
            for i, s in enumerate(_sentences(5, seed=7))
        ]
    )
    only_late = models.Filter(
        must=[models.FieldCondition(key="metadata.i", range=models.Range(gte=20))]
    )
    steps = {
        "hits": store.similarity_search_with_score("cats run fast", k=6),
        "filtered": store.similarity_search_with_score("blue birds fly", k=5, filter=only_late),
        "offset": store.similarity_search_with_score("wild fish swim", k=3, offset=2),
    }
    if mode == RetrievalMode.HYBRID:
        dbsf = models.FusionQuery(fusion=models.Fusion.DBSF)
        steps["dbsf"] = store.similarity_search_with_score(
            "old dogs sleep", k=6, hybrid_fusion=dbsf
        )
        steps["retriever"] = [
            (d, 0.0) for d in store.as_retriever(search_kwargs={"k": 3}).invoke("young red fish")
        ]
    got = store.get_by_ids(added[:2])
    store.delete(added[:1])
    steps["after"] = store.similarity_search_with_score(_sentences(5, seed=7)[0], k=3)
    out = {
        name: [(d.page_content, d.metadata.get("i", d.metadata.get("extra")), s) for d, s in hits]
        for name, hits in steps.items()
    }
    out["got"] = sorted(d.page_content for d in got)
    out["ids_are_uuids"] = all(uuid.UUID(i) for i in added)
    return out


def _same(got, reference):
    assert got.keys() == reference.keys()
    for name in reference:
        if name in ("got", "ids_are_uuids"):
            assert got[name] == reference[name], name
            continue
        assert [h[:2] for h in got[name]] == [h[:2] for h in reference[name]], name
        for (_, _, a), (_, _, b) in zip(got[name], reference[name], strict=True):
            assert a == pytest.approx(b, abs=1e-4), name


@pytest.mark.parametrize(
    ("mode", "sparse_params"),
    [
        (RetrievalMode.SPARSE, None),
        (RetrievalMode.SPARSE, {"modifier": models.Modifier.IDF}),
        (RetrievalMode.HYBRID, None),
        (RetrievalMode.HYBRID, {"modifier": models.Modifier.IDF}),
    ],
    ids=["sparse", "sparse-idf", "hybrid-rrf-dbsf", "hybrid-idf"],
)
def test_langchain_sparse_and_hybrid_modes_answer_as_on_qdrant_local_mode(
    tmp_path, mode, sparse_params
):
    """SPARSE mode (a sparse-only collection, SparseVector queries with using) and HYBRID
    mode (prefetch of the dense and the sparse field, fused by RRF and by DBSF, filters on
    both, a retriever): the same documents in the same order, scores within 1e-4."""
    reference = _sparse_steps(mode, sparse_params, location=":memory:")
    port = free_port()
    with running_server(tmp_path / "data", "--qdrant-addr", f"127.0.0.1:{port}"):
        got = _sparse_steps(mode, sparse_params, url=f"http://127.0.0.1:{port}")
    _same(got, reference)
    assert got["ids_are_uuids"] and len(got["hits"]) == 6 and len(got["after"]) == 3
    assert len(got["filtered"]) > 0 and all(i >= 20 for _, i, _ in got["filtered"])
