"""Writes qdrant_fusion.json: random ranked lists and what qdrant-client's
local mode fuses them into (qdrant_client.hybrid.fusion), for the Go test
TestFuseEqualsQdrantClientLocalMode. Run from this directory with a Python
that has qdrant-client: python gen_qdrant_fusion.py"""

import json
import random

import qdrant_client
from qdrant_client.http import models
from qdrant_client.hybrid.fusion import distribution_based_score_fusion, reciprocal_rank_fusion

rng = random.Random(25)
cases = []
for case in range(40):
    lists = []
    for _ in range(rng.randint(1, 4)):
        n = rng.choice([0, 1, 2, 3, 5, 10, 20])
        ids = rng.sample(range(30), n)
        if rng.random() < 0.2:
            scores = [0.5] * n  # a list of equal scores
        else:
            scores = sorted((round(rng.uniform(-3, 3), 6) for _ in ids), reverse=True)
        lists.append([{"id": i, "score": s} for i, s in zip(ids, scores)])
    limit = rng.choice([1, 3, 5, 10, 50])

    def points():
        return [[models.ScoredPoint(id=p["id"], version=0, score=p["score"]) for p in lst] for lst in lists]

    rrf = reciprocal_rank_fusion(points(), limit=limit)
    dbsf = distribution_based_score_fusion(points(), limit=limit)
    cases.append({
        "lists": lists,
        "limit": limit,
        "rrf": [{"id": p.id, "score": p.score} for p in rrf],
        "dbsf": [{"id": p.id, "score": p.score} for p in dbsf],
    })
with open("qdrant_fusion.json", "w") as f:
    json.dump({"qdrant_client": qdrant_client.__version__ if hasattr(qdrant_client, "__version__") else "1.20.0",
               "cases": cases}, f, indent=None)
    f.write("\n")
