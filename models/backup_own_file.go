package models

import (
	"fmt"
	"os"
	"path/filepath"
)

// OwnFileError is a backup aimed at the database itself or one of the
// files SQLite keeps beside it.
type OwnFileError struct {
	File string // as the caller named it
	Of   string // the database file or companion it is
	What string // what that file is, in words
}

func (e *OwnFileError) Error() string {
	return fmt.Sprintf("%s is %s (%s), which a running portal has open: a backup must be another file, best outside the data directory; nothing was written",
		e.File, e.What, e.Of)
}

// dbCompanions are the files SQLite keeps beside the database, with what
// they are.
var dbCompanions = []struct{ suffix, what string }{
	{"", "the portal's database itself"},
	{"-wal", "the database's write-ahead log"},
	{"-shm", "the database's shared-memory index"},
	{"-journal", "the database's rollback journal"},
}

// notOwnFile refuses file when it is the database or a companion: by file
// identity where both exist (a symlink, a hard link, another spelling of
// the path, a bind mount), else by directory identity and name (a -shm or
// -journal not there at this moment, but SQLite's the next).
func (s *Store) notOwnFile(file string) error {
	fileDir, fileBase := filepath.Split(filepath.Clean(file))
	fileDir += "." // "" is the working directory; "dir/." is dir
	// FILE may be a symlink (to the database, or a dangling one to a -shm
	// not there this moment): what it names is compared too.
	target, _ := filepath.EvalSymlinks(file)
	if target == "" { // a dangling link: what it names is still where the copy would go
		if l, err := os.Readlink(file); err == nil {
			if !filepath.IsAbs(l) {
				l = filepath.Join(fileDir, l)
			}
			target = l
		}
	}
	for _, c := range dbCompanions {
		own := s.path + c.suffix
		refuse := &OwnFileError{File: file, Of: cleanAbs(own), What: c.what}
		if sameFile(file, own) || (target != "" && sameFile(target, own)) {
			return refuse
		}
		if fileBase == filepath.Base(own) && sameFile(fileDir, filepath.Dir(own)) {
			return refuse
		}
		if target != "" {
			if d, b := filepath.Split(target); b == filepath.Base(own) && sameFile(d+".", filepath.Dir(own)) {
				return refuse
			}
		}
		if cleanAbs(file) == cleanAbs(own) {
			return refuse
		}
	}
	return nil
}

// sameFile reports whether a and b both exist and are one file (os.Stat
// follows symlinks).
func sameFile(a, b string) bool {
	fa, err := os.Stat(a)
	if err != nil {
		return false
	}
	fb, err := os.Stat(b)
	if err != nil {
		return false
	}
	return os.SameFile(fa, fb)
}

func cleanAbs(p string) string {
	if abs, err := filepath.Abs(p); err == nil {
		return abs
	}
	return filepath.Clean(p)
}
