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

// playgroundRoute serves "/" (index.html) and the files beside it.
func playgroundRoute(urlPath string) (handler, bool) {
	name := strings.TrimPrefix(urlPath, "/")
	if name == "" {
		name = "index.html"
	}
	if strings.Contains(name, "/") || strings.HasPrefix(name, ".") {
		return nil, false
	}
	data, err := fs.ReadFile(playgroundFiles, "playground/"+name)
	if err != nil {
		return nil, false
	}
	ctype := mime.TypeByExtension(path.Ext(name))
	return func(w http.ResponseWriter, r *http.Request, _ params) error {
		w.Header().Set("Content-Type", ctype)
		w.Header().Set("Cache-Control", "no-cache")
		w.Write(data)
		return nil
	}, true
}
