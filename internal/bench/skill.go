package bench

import (
	"fmt"
	"strings"

	"github.com/quire/quire"
)

// SkillFiles are the files of a benchmark skill named slug: its SKILL.md
// and n-1 small files spread over 60 directories, as a skill of many
// small documents would be.
func SkillFiles(slug string, n int) []quire.FileContent {
	files := []quire.FileContent{{Path: "SKILL.md", Content: []byte("---\nname: " + slug + "\ndescription: A benchmark skill.\n---\n# " + slug + "\n")}}
	for i := 1; i < n; i++ {
		files = append(files, quire.FileContent{Path: skillFile(i), Content: skillContent(i, 0)})
	}
	return files
}

// Revision is commit c's batch for a skill of n files: 10 of its files,
// rewritten.
func Revision(n, c int) []quire.FileContent {
	var batch []quire.FileContent
	for k := range 10 {
		i := 1 + (c*37+k*101)%(n-1)
		batch = append(batch, quire.FileContent{Path: skillFile(i), Content: skillContent(i, c)})
	}
	return batch
}

func skillFile(i int) string { return fmt.Sprintf("dir%02d/sub%d/file%04d.md", i%20, i%3, i) }

func skillContent(i, rev int) []byte {
	return []byte(fmt.Sprintf("# file %d, revision %d\n\n%s\n", i, rev, strings.Repeat(fmt.Sprintf("line %d of a small skill file\n", i), 8)))
}
