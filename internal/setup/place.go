package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// maxLinks bounds the symbolic links followed for one path (as the
// kernel's ELOOP does).
const maxLinks = 40

// locate returns the file that path leads to, every symbolic link on the
// way followed (a link to a file not there yet included): setup edits a
// link's target in place and keeps the link, as a dotfiles user expects.
// With project set, path is in the project, and so must be the file it
// leads to: a link out of the project (to the user's ~/.claude.json, say)
// would put what is there, secrets included, into a file meant to be
// committed, so it is refused, naming the link and where it leads.
func locate(path, project string) (string, error) {
	if project == "" {
		target, _, err := walk(string(filepath.Separator), components(path))
		if err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		return target, nil
	}
	root, _, err := walk(string(filepath.Separator), components(project))
	if err != nil {
		return "", fmt.Errorf("project %s: %w", project, err)
	}
	rel, err := filepath.Rel(project, path)
	if err != nil || !inside(rel) {
		return "", fmt.Errorf("%s is not in the project %s", path, project)
	}
	target, link, err := walk(root, components(rel))
	if err != nil {
		return "", fmt.Errorf("%s: %w", path, err)
	}
	if r, err := filepath.Rel(root, target); err != nil || !inside(r) {
		to, _, _ := walk(string(filepath.Separator), components(link))
		return "", fmt.Errorf("%s is a symbolic link to %s, outside the project %s: setup writes only inside the project, whose files are meant to be committed; "+
			"remove the link (or set up your user's config: hub setup without --project)", link, to, project)
	}
	return target, nil
}

// walk follows the path components from the directory dir (a path with
// no link in it) and returns the file they lead to and the first symbolic
// link followed ("" for none). The first component that does not exist
// ends the walk: the rest is appended as it is.
func walk(dir string, rest []string) (target, firstLink string, err error) {
	for links := 0; len(rest) > 0; {
		name := rest[0]
		rest = rest[1:]
		switch name {
		case "", ".":
			continue
		case "..":
			dir = filepath.Dir(dir)
			continue
		}
		next := filepath.Join(dir, name)
		st, err := os.Lstat(next)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return filepath.Join(append([]string{next}, rest...)...), firstLink, nil
		case err != nil:
			return "", firstLink, err
		case st.Mode()&fs.ModeSymlink == 0:
			dir = next
			continue
		}
		if links++; links > maxLinks {
			return "", firstLink, fmt.Errorf("more than %d symbolic links", maxLinks)
		}
		to, err := os.Readlink(next)
		if err != nil {
			return "", firstLink, err
		}
		if firstLink == "" {
			firstLink = next
		}
		if filepath.IsAbs(to) {
			dir = filepath.VolumeName(to) + string(filepath.Separator)
		}
		rest = append(components(to), rest...)
	}
	return dir, firstLink, nil
}

// components splits a path into its names (the volume and root left out).
func components(p string) []string {
	p = strings.TrimPrefix(p, filepath.VolumeName(p))
	return strings.Split(filepath.ToSlash(p), "/")
}

// inside reports whether the relative path rel stays below its base.
func inside(rel string) bool {
	return rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// backup copies old to a new file beside path, PATH.bak-TIMESTAMP (then
// .1, .2… if taken), with mode. The file is created exclusively
// (O_EXCL): never written through a link planted at its name, never over
// an earlier backup.
func backup(path string, old []byte, mode os.FileMode, now time.Time) (string, error) {
	base := path + ".bak-" + now.Format("20060102-150405")
	for i := 0; i < 100; i++ {
		name := base
		if i > 0 {
			name = fmt.Sprintf("%s.%d", base, i)
		}
		f, err := os.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		_, err = f.Write(old)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			os.Remove(name)
			return "", fmt.Errorf("back up %s: %w", path, err)
		}
		return name, nil
	}
	return "", fmt.Errorf("back up %s: %s.* are all taken: remove old backups", path, base)
}
