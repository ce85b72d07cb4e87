package valid

import "strings"

// These report whether git treats a tree entry name as one of its special
// files on some filesystem (git's is_hfs_dot* and is_ntfs_dot* of path.c),
// for checks of raw tree objects that see one name at a time. NTFS also
// splits names at a backslash, so each backslash-separated part counts.

// IsDotGit reports whether git fsck reads the tree entry name as ".git".
func IsDotGit(name string) bool { return anyPart(name, "git", "", true) }

// IsDotGitmodules reports whether git reads the entry name as ".gitmodules".
func IsDotGitmodules(name string) bool { return anyPart(name, "gitmodules", "gi7eba", false) }

// IsDotGitattributes reports whether git reads the entry name as ".gitattributes".
func IsDotGitattributes(name string) bool {
	return anyPart(name, "gitattributes", "gi7d29", false)
}

// IsDotGitignore reports whether git reads the entry name as ".gitignore".
func IsDotGitignore(name string) bool { return anyPart(name, "gitignore", "gi250a", false) }

// IsDotMailmap reports whether git reads the entry name as ".mailmap".
func IsDotMailmap(name string) bool { return anyPart(name, "mailmap", "maba30", false) }

func anyPart(name, special, short string, dotgit bool) bool {
	for part := range strings.SplitSeq(name, `\`) {
		if gitName(part, special, short, dotgit) {
			return true
		}
	}
	return false
}
