package meta

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sort"

	"github.com/quire/quire"
)

// OAuth clients and grants (quire.OAuthStore), stored like API keys:
//
//	oauthclients/ab/<id>.json   oauthgrants/ab/<id>.json
//
// A grant holds the hashes of its tokens; the index finds a grant by any
// of them.

const (
	oauthClientsDir = "oauthclients"
	oauthGrantsDir  = "oauthgrants"
)

// oauthIndex is the OAuth part of the index.
type oauthIndex struct {
	clients map[string]*quire.OAuthClient
	grants  map[string]*quire.OAuthGrant
	tokens  map[string]string // token hash -> grant id
}

func (o *oauthIndex) reset() {
	o.clients = map[string]*quire.OAuthClient{}
	o.grants = map[string]*quire.OAuthGrant{}
	o.tokens = map[string]string{}
}

func (o *oauthIndex) addGrant(g *quire.OAuthGrant) {
	o.grants[g.ID] = g
	for _, t := range g.Tokens {
		o.tokens[t.Hash] = g.ID
	}
}

func (o *oauthIndex) removeGrant(id string) {
	g := o.grants[id]
	if g == nil {
		return
	}
	for _, t := range g.Tokens {
		if o.tokens[t.Hash] == id {
			delete(o.tokens, t.Hash)
		}
	}
	delete(o.grants, id)
}

// apply sets the OAuth record stored at path, of directory dir; it
// reports whether dir is one of OAuth's. Callers hold m.mu.
func (o *oauthIndex) apply(dir, path string, b []byte) (bool, error) {
	switch dir {
	case oauthClientsDir:
		c := &quire.OAuthClient{}
		if err := json.Unmarshal(b, c); err != nil {
			return true, fmt.Errorf("decode %s: %w", path, err)
		}
		o.clients[c.ID] = c
	case oauthGrantsDir:
		g := &quire.OAuthGrant{}
		if err := json.Unmarshal(b, g); err != nil {
			return true, fmt.Errorf("decode %s: %w", path, err)
		}
		o.addGrant(g)
	default:
		return false, nil
	}
	return true, nil
}

// remove drops the OAuth record id of directory dir. Callers hold m.mu.
func (o *oauthIndex) remove(dir, id string) {
	switch dir {
	case oauthClientsDir:
		delete(o.clients, id)
	case oauthGrantsDir:
		o.removeGrant(id)
	}
}

func cloneGrant(g *quire.OAuthGrant) *quire.OAuthGrant {
	c := *g
	c.Tokens = slices.Clone(g.Tokens)
	return &c
}

func (s *Store) CreateOAuthClient(ctx context.Context, c *quire.OAuthClient) error {
	if c.ID == "" {
		c.ID = newID()
	}
	c.CreatedAt = s.now().UTC()
	by := quire.Actor{Name: "quire", Email: "quire@localhost"}
	return s.idx.write(by, "Register OAuth client "+c.ID, map[string]any{metaPath(oauthClientsDir, c.ID): c}, nil, nil)
}

func (s *Store) OAuthClient(ctx context.Context, id string) (*quire.OAuthClient, error) {
	var out quire.OAuthClient
	err := s.idx.read(ctx, func() error {
		c := s.idx.oauth.clients[id]
		if c == nil {
			return quire.Errorf(quire.ENOTFOUND, "OAuth client not found")
		}
		out = *c
		out.RedirectURIs = slices.Clone(c.RedirectURIs)
		return nil
	})
	return &out, err
}

func (s *Store) PutOAuthGrant(ctx context.Context, by quire.Actor, g *quire.OAuthGrant) error {
	now := s.now().UTC()
	if g.CreatedAt.IsZero() {
		g.CreatedAt = now
	}
	g.UpdatedAt = now
	rev := g.Rev
	put := *g
	put.Rev = rev + 1
	err := s.idx.write(by, "Update OAuth grant "+g.ID, map[string]any{metaPath(oauthGrantsDir, g.ID): &put}, nil, func() error {
		cur := s.idx.oauth.grants[g.ID]
		switch {
		case cur == nil && rev == 0:
			return nil
		case cur == nil:
			return quire.Errorf(quire.ECONFLICT, "OAuth grant %s was revoked", g.ID)
		case cur.Rev != rev:
			return quire.Errorf(quire.ECONFLICT, "OAuth grant %s changed concurrently", g.ID)
		}
		return nil
	})
	if err == nil {
		g.Rev = put.Rev
	}
	return err
}

func (s *Store) OAuthGrant(ctx context.Context, id string) (*quire.OAuthGrant, error) {
	var out *quire.OAuthGrant
	err := s.idx.read(ctx, func() error {
		g := s.idx.oauth.grants[id]
		if g == nil {
			return quire.Errorf(quire.ENOTFOUND, "OAuth grant not found")
		}
		out = cloneGrant(g)
		return nil
	})
	return out, err
}

func (s *Store) OAuthGrantByToken(ctx context.Context, hash string) (*quire.OAuthGrant, error) {
	var out *quire.OAuthGrant
	err := s.idx.read(ctx, func() error {
		g := s.idx.oauth.grants[s.idx.oauth.tokens[hash]]
		if g == nil {
			return quire.Errorf(quire.ENOTFOUND, "OAuth token not found")
		}
		out = cloneGrant(g)
		return nil
	})
	return out, err
}

// OAuthGrants lists the grants of userID, or every grant when userID is "".
func (s *Store) OAuthGrants(ctx context.Context, userID string) ([]*quire.OAuthGrant, error) {
	var out []*quire.OAuthGrant
	err := s.idx.read(ctx, func() error {
		for _, g := range s.idx.oauth.grants {
			if userID == "" || g.UserID == userID {
				out = append(out, cloneGrant(g))
			}
		}
		return nil
	})
	sort.Slice(out, func(i, j int) bool { return out[i].CreatedAt.Before(out[j].CreatedAt) })
	return out, err
}

func (s *Store) DeleteOAuthGrant(ctx context.Context, by quire.Actor, id string) error {
	return s.idx.write(by, "Revoke OAuth grant "+id, nil, []string{metaPath(oauthGrantsDir, id)}, func() error {
		if s.idx.oauth.grants[id] == nil {
			return quire.Errorf(quire.ENOTFOUND, "OAuth grant not found")
		}
		return nil
	})
}

var _ quire.OAuthStore = (*Store)(nil)
