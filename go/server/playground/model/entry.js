// The playground's sentence encoder, bundled for the browser by build.mjs
// into dist/embed.js: window.strataEmbed(texts) resolves to one 512-float
// array per text, computed by the same model, tokenizer and TensorFlow.js
// WebAssembly backend as ../../../shared/data/embed/embed_use.js (the
// Node script that made the demo vectors). The weights and the vocabulary
// are fetched from this script's own directory, never from elsewhere.
import * as core from "@energetic-ai/core";
import { initModel } from "@energetic-ai/embeddings";

const base = new URL(".", document.currentScript.src).href;
core.setWasmPaths(base);

let model = null;
async function load() {
  const [graph, vocabulary] = await Promise.all([
    core.loadGraphModel(base + "model.json"),
    fetch(base + "vocab.json").then((r) => {
      if (!r.ok) throw new Error(`vocab.json: ${r.status}`);
      return r.json();
    }),
  ]);
  return initModel(async () => ({ model: graph, vocabulary }));
}

window.strataEmbed = async (texts) => {
  if (!model) model = load();
  const m = await model;
  return m.embed(texts);
};
window.strataEmbedBackend = () => core.getBackend();
