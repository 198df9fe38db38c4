package server

import (
	"embed"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"net/http"
	"os"
	"path"
	"strings"
)

// The playground is plain HTML, CSS and JavaScript, embedded so that the
// binary is the whole deployment: no build step, nothing from a CDN. Only
// the top-level files: playground/model/ is the npm package that builds
// the sentence encoder (see playgroundModelFiles), never embedded.
//
//go:embed playground/*.html playground/*.js playground/*.css
var playgroundFiles embed.FS

// playgroundHandlers serves each file of the playground, by name
// ("index.html", which also answers "/", "app.js", ...), and, under the
// pattern "model/{file}", the files of modelDir (see playgroundModelFiles).
func playgroundHandlers(modelDir string) map[string]handler {
	entries, err := fs.ReadDir(playgroundFiles, "playground")
	if err != nil {
		panic(err) // embedded: present in every build
	}
	handlers := map[string]handler{}
	for _, entry := range entries {
		name := entry.Name()
		if entry.IsDir() || strings.HasPrefix(name, ".") {
			continue
		}
		data, err := fs.ReadFile(playgroundFiles, "playground/"+name)
		if err != nil {
			panic(err)
		}
		ctype := mime.TypeByExtension(path.Ext(name))
		handlers[name] = func(w http.ResponseWriter, r *http.Request) error {
			w.Header().Set("Content-Type", ctype)
			w.Header().Set("Cache-Control", "no-cache")
			w.Write(data)
			return nil
		}
	}
	handlers["model/{file}"] = playgroundModelFiles(modelDir)
	return handlers
}

// playgroundModelFiles serves the files of dir (Config.PlaygroundModel),
// one level, no listing: the sentence encoder that the playground's
// semantic search runs in the browser. `make playground-model` builds it
// into go/server/playground/model/dist (the bundle embed.js, the model's
// weights and vocabulary, TensorFlow.js's WebAssembly binaries: 29 MB, so
// it is served from a directory rather than embedded in every binary;
// from a pip install, python -m strata.playground_model DIR builds it).
// Without it (dir ""), every file is a 404 and the page searches by
// words with BM25 only, saying why and how to get it.
func playgroundModelFiles(dir string) handler {
	var files fs.FS
	if dir != "" {
		files = os.DirFS(dir)
	}
	return func(w http.ResponseWriter, r *http.Request) error {
		name := r.PathValue("file")
		if files == nil {
			return fmt.Errorf("%w: %s (the server runs without the playground's model: --playground-model)", ErrNoRoute, truncateForMessage(r.URL.Path))
		}
		info, err := fs.Stat(files, name)
		if err != nil || !info.Mode().IsRegular() {
			if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.Is(err, fs.ErrInvalid) {
				return fmt.Errorf("server: playground model file %q: %w", name, err)
			}
			return fmt.Errorf("%w: %s", ErrNoRoute, truncateForMessage(r.URL.Path))
		}
		f, err := files.Open(name)
		if err != nil {
			return fmt.Errorf("server: playground model file %q: %w", name, err)
		}
		defer f.Close()
		if ctype := mime.TypeByExtension(path.Ext(name)); ctype != "" {
			w.Header().Set("Content-Type", ctype)
		} else {
			w.Header().Set("Content-Type", "application/octet-stream")
		}
		// The files change only with the pinned npm versions: let the
		// browser revalidate (Last-Modified) rather than fetch 29 MB again.
		w.Header().Set("Cache-Control", "no-cache")
		http.ServeContent(w, r, name, info.ModTime(), f.(io.ReadSeeker)) // os.DirFS's files are *os.File
		return nil
	}
}
