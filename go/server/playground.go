package server

import (
	"embed"
	"io/fs"
	"mime"
	"net/http"
	"path"
	"strings"
)

// The playground is plain HTML, CSS and JavaScript, embedded so that the
// binary is the whole deployment: no build step, nothing from a CDN.
//
//go:embed playground
var playgroundFiles embed.FS

// playgroundHandlers serves each file of the playground, by name
// ("index.html", which also answers "/", "app.js", ...).
func playgroundHandlers() map[string]handler {
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
	return handlers
}
