package qdrant

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"path/filepath"
	"slices"
	"sync"

	"github.com/strata-db/strata/go/server/internal/statefile"
	"github.com/strata-db/strata/go/server/registry"
	"github.com/strata-db/strata/go/vfs"
)

// Aliases. An alias is a second name of a collection: every collection
// route resolves it (h.open), so a search of an alias searches its
// collection. The table lives in the data dir, in the state file
// <data>/qdrant.aliases (package statefile: a checksummed JSON document
// {"aliases": {alias: collection}}), replaced whole on each change, so it
// survives a restart. As in Qdrant, a change of several actions is
// applied whole or not at all, deleting a collection through this door
// deletes its aliases, an alias may not take a collection's name nor a
// collection an alias's, and deleting a missing alias is no error (as in
// qdrant-client's local mode).
// A collection dropped through the native door leaves its aliases
// dangling: they answer 404 for the collection until it is made again.

// aliasFile is the table's file in the data dir. Do not change.
const aliasFile = "qdrant.aliases"

// aliasTable is the door's aliases.
type aliasTable struct {
	fs   vfs.FS
	path string

	mu      sync.RWMutex
	byAlias map[string]string // alias → collection
}

type aliasDocument struct {
	Aliases map[string]string `json:"aliases"`
}

// openAliases reads the table of the data dir (none yet: an empty one). A
// damaged file fails: silently starting empty would send every search of
// an alias to a 404.
func openAliases(fsys vfs.FS, dir string) (*aliasTable, error) {
	t := &aliasTable{fs: fsys, path: filepath.Join(dir, aliasFile), byAlias: map[string]string{}}
	doc, err := statefile.Read(fsys, t.path)
	if errors.Is(err, fs.ErrNotExist) {
		return t, nil
	}
	if err != nil {
		return nil, fmt.Errorf("qdrant: aliases (remove the file to start without them): %w", err)
	}
	var d aliasDocument
	if err := json.Unmarshal(doc, &d); err != nil {
		return nil, fmt.Errorf("qdrant: aliases %s: %w: %v", t.path, statefile.ErrCorrupt, err)
	}
	if d.Aliases != nil {
		t.byAlias = d.Aliases
	}
	return t, nil
}

// resolve returns the collection an alias names, else name itself.
func (t *aliasTable) resolve(name string) string {
	t.mu.RLock()
	defer t.mu.RUnlock()
	if c, ok := t.byAlias[name]; ok {
		return c
	}
	return name
}

func (t *aliasTable) isAlias(name string) bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	_, ok := t.byAlias[name]
	return ok
}

// change applies edit to a copy of the table and, if it succeeds, writes
// the copy and makes it the table.
func (t *aliasTable) change(edit func(next map[string]string) error) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	next := make(map[string]string, len(t.byAlias))
	for a, c := range t.byAlias {
		next[a] = c
	}
	if err := edit(next); err != nil {
		return err
	}
	doc, err := json.Marshal(aliasDocument{Aliases: next})
	if err != nil {
		return err
	}
	if err := statefile.Write(t.fs, t.path, doc); err != nil {
		return fmt.Errorf("qdrant: aliases: %w", err)
	}
	t.byAlias = next
	return nil
}

// list returns the aliases of collection (all when it is ""), sorted by
// alias.
func (t *aliasTable) list(collectionName string) []aliasDescription {
	t.mu.RLock()
	defer t.mu.RUnlock()
	out := []aliasDescription{}
	for a, c := range t.byAlias {
		if collectionName == "" || c == collectionName {
			out = append(out, aliasDescription{AliasName: a, CollectionName: c})
		}
	}
	slices.SortFunc(out, func(a, b aliasDescription) int {
		if a.AliasName < b.AliasName {
			return -1
		}
		if a.AliasName > b.AliasName {
			return 1
		}
		return 0
	})
	return out
}

// aliasDescription is Qdrant's AliasDescription.
type aliasDescription struct {
	AliasName      string `json:"alias_name"`
	CollectionName string `json:"collection_name"`
}

// aliasesResponse is Qdrant's CollectionsAliasesResponse.
type aliasesResponse struct {
	Aliases []aliasDescription `json:"aliases"`
}

// aliasAction is one of Qdrant's AliasOperations.
type aliasAction struct {
	CreateAlias *createAlias `json:"create_alias"`
	DeleteAlias *deleteAlias `json:"delete_alias"`
	RenameAlias *renameAlias `json:"rename_alias"`
}

type createAlias struct {
	CollectionName string `json:"collection_name"`
	AliasName      string `json:"alias_name"`
}

type deleteAlias struct {
	AliasName string `json:"alias_name"`
}

type renameAlias struct {
	OldAliasName string `json:"old_alias_name"`
	NewAliasName string `json:"new_alias_name"`
}

// changeAliasesRequest is Qdrant's ChangeAliasesOperation.
type changeAliasesRequest struct {
	Actions []aliasAction `json:"actions"`
}

// updateAliases answers POST /collections/aliases: the actions in order,
// all or none.
func (h *Handler) updateAliases(_ context.Context, req *changeAliasesRequest) (bool, error) {
	err := h.aliases.change(func(next map[string]string) error {
		for i, a := range req.Actions {
			n := 0
			for _, set := range []bool{a.CreateAlias != nil, a.DeleteAlias != nil, a.RenameAlias != nil} {
				if set {
					n++
				}
			}
			if n != 1 {
				return badRequestf("actions[%d]: exactly one of create_alias, delete_alias, rename_alias", i)
			}
			switch {
			case a.CreateAlias != nil:
				alias, target := a.CreateAlias.AliasName, a.CreateAlias.CollectionName
				if err := registry.CheckName(alias); err != nil {
					return badRequestf("actions[%d].create_alias.alias_name: %v", i, err)
				}
				if _, err := h.cfg.Collections.Collection(target); err != nil {
					if status(err) == http.StatusNotFound {
						return fmt.Errorf("%w: Collection `%s` doesn't exist", ErrNotFound, target)
					}
					return err
				}
				if _, err := h.cfg.Collections.Collection(alias); err == nil {
					return badRequestf("Wrong input: Collection `%s` already exists!", alias)
				}
				next[alias] = target
			case a.DeleteAlias != nil: // a missing alias is deleted already, as in local mode
				delete(next, a.DeleteAlias.AliasName)
			case a.RenameAlias != nil:
				old, renamed := a.RenameAlias.OldAliasName, a.RenameAlias.NewAliasName
				target, ok := next[old]
				if !ok {
					return fmt.Errorf("%w: Alias %s does not exist", ErrNotFound, old)
				}
				if err := registry.CheckName(renamed); err != nil {
					return badRequestf("actions[%d].rename_alias.new_alias_name: %v", i, err)
				}
				if _, err := h.cfg.Collections.Collection(renamed); err == nil {
					return badRequestf("Wrong input: Collection `%s` already exists!", renamed)
				}
				delete(next, old)
				next[renamed] = target
			}
		}
		return nil
	})
	return err == nil, err
}

// forgetAliases deletes the aliases of a deleted collection.
func (h *Handler) forgetAliases(collectionName string) error {
	if len(h.aliases.list(collectionName)) == 0 {
		return nil
	}
	return h.aliases.change(func(next map[string]string) error {
		for a, c := range next {
			if c == collectionName {
				delete(next, a)
			}
		}
		return nil
	})
}

func (h *Handler) restUpdateAliases(r *http.Request) (any, error) {
	var req changeAliasesRequest
	if err := decode(r, &req); err != nil {
		return nil, err
	}
	return h.updateAliases(r.Context(), &req)
}

// listAliases answers GET /aliases.
func (h *Handler) listAliases(_ context.Context) (aliasesResponse, error) {
	return aliasesResponse{Aliases: h.aliases.list("")}, nil
}

// collectionAliases answers GET /collections/{name}/aliases: 404 for a
// collection that does not exist, as Qdrant.
func (h *Handler) collectionAliases(_ context.Context, name string) (aliasesResponse, error) {
	if _, err := h.cfg.Collections.Collection(name); err != nil {
		return aliasesResponse{}, err
	}
	return aliasesResponse{Aliases: h.aliases.list(name)}, nil
}

func (h *Handler) restListAliases(r *http.Request) (any, error) { return h.listAliases(r.Context()) }

func (h *Handler) restCollectionAliases(r *http.Request) (any, error) {
	return h.collectionAliases(r.Context(), r.PathValue("name"))
}
