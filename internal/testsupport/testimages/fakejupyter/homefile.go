package main

import (
	"errors"
	"io"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"strings"
)

// The homefile endpoints write and read one file in $HOME, so tests can
// show that the home volume outlives the container.

func (s *server) handleWriteHome(w http.ResponseWriter, r *http.Request) {
	path, ok := homePath(w, r)
	if !ok {
		return
	}
	data, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

func (s *server) handleReadHome(w http.ResponseWriter, r *http.Request) {
	path, ok := homePath(w, r)
	if !ok {
		return
	}
	data, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		http.Error(w, "no such file", http.StatusNotFound)
		return
	} else if err != nil {
		http.Error(w, err.Error(), http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/octet-stream")
	_, _ = w.Write(data)
}

// homePath allows plain file names only: no directories, no "..".
func homePath(w http.ResponseWriter, r *http.Request) (string, bool) {
	name := r.URL.Query().Get("name")
	home := os.Getenv("HOME")
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) || home == "" {
		http.Error(w, "need ?name=<plain file name> and $HOME", http.StatusBadRequest)
		return "", false
	}
	return filepath.Join(home, name), true
}
