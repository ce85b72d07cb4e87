// Package odb is quire's git object database: the objects and packs of a
// bare repository on disk. It reads objects (loose, or straight from
// mapped packs, deltas included), writes them (loose objects, trees with
// a shared cache of decoded entries, packs for clones copied from what is
// stored), caches clone packs and pack indexes, repacks repositories, and
// checks raw objects the way git fsck --strict does before any is stored.
//
// It knows objects and packs, not what they mean: refs, versions, assets
// and the wire protocol live in gitstore and the protocol code above it.
// It must not import gitstore, the version engine, gin or go-redis.
package odb
