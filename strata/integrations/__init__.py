"""Framework integrations: each module translates a framework's vector store interface to
strata.Collection and strata.AsyncCollection, and needs its framework installed (an extra).

- strata.integrations.langchain: StrataVectorStore, a LangChain VectorStore
  (``pip install 'strata[langchain]'``).
- strata.integrations.llamaindex: StrataVectorStore, a LlamaIndex vector store
  (``pip install 'strata[llamaindex]'``).
"""
