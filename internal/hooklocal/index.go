package hooklocal

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// indexStaged tells, from the repository's files alone and without
// starting git, whether a commit in the repository at dir has anything
// staged: known false when the files do not say for sure, and git must be
// asked (`git diff --cached`). Starting git is most of a guard check with
// nothing staged (scripts/bench-hook-start.sh).
//
// The index (GIT_INDEX_FILE, which git commit sets for its hooks, else
// the repository's) holds, in its cache-tree extension, the tree that a
// commit of it would write: git commit brings it up to date before it
// runs the pre-commit hook. Nothing is staged when that tree is HEAD's
// (or, on a branch with no commit yet, when the index is empty). What is
// not read here is not guessed: a split or sparse index, a cache-tree
// that is not up to date, unmerged or intent-to-add entries, a HEAD held
// in a reftable, in a pack as a delta or behind alternates, a SHA-256
// repository: all leave it to git.
func indexStaged(dir string, getenv func(string) string) (staged, known bool) {
	gitDir, common, ok := findGitDir(dir, getenv)
	if !ok {
		return false, false
	}
	head, unborn, ok := headCommit(gitDir, common)
	if !ok {
		return false, false
	}
	index := getenv("GIT_INDEX_FILE")
	switch {
	case index == "":
		index = filepath.Join(gitDir, "index")
	case !filepath.IsAbs(index):
		index = filepath.Join(dir, index)
	}
	b, err := os.ReadFile(index)
	if errors.Is(err, os.ErrNotExist) && unborn {
		return false, true // a new repository: nothing added yet
	}
	if err != nil {
		return false, false
	}
	entries, root, ok := readIndex(b)
	switch {
	case !ok:
		return false, false
	case unborn:
		return entries > 0, true
	case root == nil:
		return false, false
	}
	tree, ok := commitTree(common, head)
	if !ok {
		return false, false
	}
	return !bytes.Equal(tree, root), true
}

// findGitDir returns the git directory of the worktree at dir (GIT_DIR,
// else the .git found from dir upwards) and the common directory of its
// repository (GIT_COMMON_DIR, else the one a linked worktree's commondir
// file names, else the git directory itself).
func findGitDir(dir string, getenv func(string) string) (gitDir, common string, ok bool) {
	for _, v := range []string{"GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES"} {
		if getenv(v) != "" {
			return "", "", false // git's discovery rules or objects elsewhere: let git apply them
		}
	}
	if gitDir = getenv("GIT_DIR"); gitDir != "" {
		if !filepath.IsAbs(gitDir) {
			gitDir = filepath.Join(dir, gitDir)
		}
	} else {
		d, err := filepath.Abs(dir)
		if err != nil {
			return "", "", false
		}
		for {
			p := filepath.Join(d, ".git")
			if fi, err := os.Stat(p); err == nil {
				if fi.IsDir() {
					gitDir = p
				} else if gitDir, ok = gitFile(p); !ok {
					return "", "", false
				}
				break
			}
			up := filepath.Dir(d)
			if up == d {
				return "", "", false
			}
			d = up
		}
	}
	common = getenv("GIT_COMMON_DIR")
	if common == "" {
		common = gitDir
		if b, err := os.ReadFile(filepath.Join(gitDir, "commondir")); err == nil {
			common = strings.TrimSpace(string(b))
			if !filepath.IsAbs(common) {
				common = filepath.Join(gitDir, common)
			}
		}
	} else if !filepath.IsAbs(common) {
		common = filepath.Join(dir, common)
	}
	return gitDir, common, true
}

// gitFile reads the .git file of a linked worktree or a submodule
// ("gitdir: PATH").
func gitFile(p string) (string, bool) {
	b, err := os.ReadFile(p)
	if err != nil {
		return "", false
	}
	s, ok := strings.CutPrefix(strings.TrimSpace(string(b)), "gitdir: ")
	if !ok {
		return "", false
	}
	if !filepath.IsAbs(s) {
		s = filepath.Join(filepath.Dir(p), s)
	}
	return s, true
}

// headCommit returns the commit HEAD names, or unborn when HEAD is a
// branch with no commit yet.
func headCommit(gitDir, common string) (id []byte, unborn, ok bool) {
	b, err := os.ReadFile(filepath.Join(gitDir, "HEAD"))
	if err != nil {
		return nil, false, false
	}
	for range 5 { // symbolic refs, a few deep at most
		s := strings.TrimSpace(string(b))
		ref, sym := strings.CutPrefix(s, "ref: ")
		if !sym {
			id, err := hex.DecodeString(s)
			return id, false, err == nil && len(id) == 20
		}
		if !strings.HasPrefix(ref, "refs/") || strings.Contains(ref, "..") || ref == "refs/heads/.invalid" {
			return nil, false, false // the last: the refs are in a reftable
		}
		b, err = os.ReadFile(filepath.Join(common, ref))
		if err == nil {
			continue
		}
		if !errors.Is(err, os.ErrNotExist) {
			return nil, false, false
		}
		id, found, ok := packedRef(common, ref)
		if !found {
			// A branch in neither place has no commit yet.
			return nil, ok, ok && strings.HasPrefix(ref, "refs/heads/")
		}
		return id, false, ok
	}
	return nil, false, false
}

// packedRef looks ref up in the repository's packed-refs file.
func packedRef(common, ref string) (id []byte, found, ok bool) {
	b, err := os.ReadFile(filepath.Join(common, "packed-refs"))
	if errors.Is(err, os.ErrNotExist) {
		return nil, false, true
	}
	if err != nil {
		return nil, false, false
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if h, name, cut := strings.Cut(line, " "); cut && name == ref {
			id, err := hex.DecodeString(h)
			return id, true, err == nil && len(id) == 20
		}
	}
	return nil, false, true
}

// readIndex reads an index file (versions 2 to 4): its number of
// entries and the tree of its root in the cache-tree extension (nil when
// the extension is missing or the root not up to date). ok false: an
// index this does not read (a split or sparse index, unmerged or
// intent-to-add entries, another hash, a damaged file).
func readIndex(b []byte) (entries int, root []byte, ok bool) {
	const hashLen, fixed = 20, 62 // the entry's stat data, id and flags
	if len(b) < 12+hashLen || string(b[:4]) != "DIRC" {
		return 0, nil, false
	}
	version := binary.BigEndian.Uint32(b[4:])
	if version < 2 || version > 4 {
		return 0, nil, false
	}
	n := int(binary.BigEndian.Uint32(b[8:]))
	end := len(b) - hashLen
	off := 12
	for range n {
		if off+fixed > end {
			return 0, nil, false
		}
		flags := binary.BigEndian.Uint16(b[off+60:])
		if flags&0x3000 != 0 {
			return 0, nil, false // unmerged: the commit stops anyway
		}
		p := off + fixed
		if flags&0x4000 != 0 { // extended flags
			if p+2 > end || binary.BigEndian.Uint16(b[p:])&0x2000 != 0 {
				return 0, nil, false // intent to add
			}
			p += 2
		}
		if version == 4 {
			for p < end && b[p]&0x80 != 0 { // the prefix length to strip
				p++
			}
			p++
		}
		nul := bytes.IndexByte(b[p:end], 0)
		if nul < 0 {
			return 0, nil, false
		}
		p += nul + 1
		if version < 4 {
			p = off + (p-off+7)&^7 // padded to 8 bytes with 1 to 8 NULs
		}
		off = p
	}
	for off+8 <= end {
		sig, size := string(b[off:off+4]), int(binary.BigEndian.Uint32(b[off+4:]))
		body := off + 8
		if size < 0 || body+size > end {
			return 0, nil, false
		}
		switch {
		case sig == "TREE":
			root = cacheTreeRoot(b[body : body+size])
		case sig[0] >= 'a' && sig[0] <= 'z':
			return 0, nil, false // one git requires readers to know: a split or sparse index
		}
		off = body + size
	}
	return n, root, true
}

// cacheTreeRoot returns the root's tree of a cache-tree extension ("",
// NUL, its entry count, space, its subtree count, newline, then its id
// unless the count is -1: not up to date).
func cacheTreeRoot(ext []byte) []byte {
	if len(ext) == 0 || ext[0] != 0 {
		return nil
	}
	line, rest, ok := bytes.Cut(ext[1:], []byte{'\n'})
	if !ok {
		return nil
	}
	count, _, _ := bytes.Cut(line, []byte{' '})
	if c, err := strconv.Atoi(string(count)); err != nil || c < 0 || len(rest) < 20 {
		return nil
	}
	return rest[:20]
}

// commitTree returns the tree of commit id, read from its loose object or
// from a pack where it is stored whole.
func commitTree(common string, id []byte) ([]byte, bool) {
	h := hex.EncodeToString(id)
	objects := filepath.Join(common, "objects")
	var r io.Reader
	loose := true
	if f, err := os.Open(filepath.Join(objects, h[:2], h[2:])); err == nil {
		defer f.Close()
		r = f
	} else {
		loose = false
		f, off, ok := packedObject(objects, id)
		if !ok {
			return nil, false
		}
		defer f.Close()
		r = io.NewSectionReader(f, off, 1<<20)
	}
	z, err := zlib.NewReader(r)
	if err != nil {
		return nil, false
	}
	var head [128]byte // "tree HEX\n" comes first, after "commit SIZE\0" in a loose object
	n, _ := io.ReadFull(z, head[:])
	body := head[:n]
	if loose {
		var ok bool
		if body, ok = bytes.CutPrefix(body, []byte("commit ")); !ok {
			return nil, false
		}
		if _, body, ok = bytes.Cut(body, []byte{0}); !ok {
			return nil, false
		}
	}
	tree, ok := bytes.CutPrefix(body, []byte("tree "))
	if !ok || len(tree) < 41 || tree[40] != '\n' {
		return nil, false
	}
	t, err := hex.DecodeString(string(tree[:40]))
	return t, err == nil
}

// packedObject finds commit id in a pack that holds it whole (not as a
// delta), through the packs' version 2 indexes: the open pack and where
// the object's compressed data starts.
func packedObject(objects string, id []byte) (*os.File, int64, bool) {
	if _, err := os.Stat(filepath.Join(objects, "info", "alternates")); err == nil {
		return nil, 0, false // objects elsewhere too: let git look
	}
	idxs, _ := filepath.Glob(filepath.Join(objects, "pack", "pack-*.idx"))
	for _, idx := range idxs {
		off, found := idxOffset(idx, id)
		if !found {
			continue
		}
		f, err := os.Open(strings.TrimSuffix(idx, ".idx") + ".pack")
		if err != nil {
			return nil, 0, false
		}
		var hdr [16]byte // the type and the size's varint
		n, _ := f.ReadAt(hdr[:], off)
		if n == 0 || (hdr[0]>>4)&7 != 1 { // 1 is a commit; 6 and 7 are deltas
			f.Close()
			return nil, 0, false
		}
		i := 0
		for i < n && hdr[i]&0x80 != 0 {
			i++
		}
		if i >= n {
			f.Close()
			return nil, 0, false
		}
		return f, off + int64(i) + 1, true
	}
	return nil, 0, false
}

// idxOffset looks id up in a version 2 pack index and returns its offset
// in the pack.
func idxOffset(idx string, id []byte) (int64, bool) {
	f, err := os.Open(idx)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var hdr [8 + 256*4]byte
	if _, err := f.ReadAt(hdr[:], 0); err != nil || string(hdr[:8]) != "\xfftOc\x00\x00\x00\x02" {
		return 0, false
	}
	fan := func(i int) int64 { return int64(binary.BigEndian.Uint32(hdr[8+4*i:])) }
	n := fan(255)
	const ids = int64(len(hdr))
	lo, hi := int64(0), fan(int(id[0]))
	if id[0] > 0 {
		lo = fan(int(id[0]) - 1)
	}
	var at [20]byte
	for lo < hi {
		m := (lo + hi) / 2
		if _, err := f.ReadAt(at[:], ids+m*20); err != nil {
			return 0, false
		}
		switch c := bytes.Compare(at[:], id); {
		case c < 0:
			lo = m + 1
		case c > 0:
			hi = m
		default:
			if _, err := f.ReadAt(at[:4], ids+n*24+m*4); err != nil { // past the ids and their CRCs
				return 0, false
			}
			o := binary.BigEndian.Uint32(at[:4])
			if o&0x80000000 != 0 {
				return 0, false // a pack over 2 GiB: let git look
			}
			return int64(o), true
		}
	}
	return 0, false
}
