// settings.go turns configuration into the values the components take:
// rate-limit rules, and a JWT verifier whose secret or keys are read from
// the environment or files, never from the YAML itself.

package gateway

import (
	"context"
	"fmt"
	"os"
	"strings"

	"github.com/mcpgate/mcpgate/internal/auth"
	"github.com/mcpgate/mcpgate/internal/config"
	"github.com/mcpgate/mcpgate/internal/policy"
	"github.com/mcpgate/mcpgate/mcp"
)

func limitRules(c config.RateLimits) policy.LimitRules {
	lim := func(l config.LimitConfig) policy.Limit {
		return policy.Limit{Rate: l.Rate, Burst: l.Burst, PerEntry: l.PerEntry}
	}
	r := policy.LimitRules{Default: lim(c.Default), Roles: map[string]policy.Limit{}}
	for role, l := range c.Roles {
		r.Roles[role] = lim(l)
	}
	for _, e := range c.Entries {
		r.Entries = append(r.Entries, policy.EntryLimit{Kind: mcp.EntryKind(e.Kind), Name: e.Name, Limit: lim(e.LimitConfig)})
	}
	return r
}

func jwtVerifier(ctx context.Context, j *config.JWT) (*auth.JWTVerifier, error) {
	if j == nil {
		return nil, nil
	}
	cfg := auth.JWTConfig{
		Algorithm:    j.Algorithm,
		JWKSURL:      j.JWKSURL,
		Issuer:       j.Issuer,
		Audience:     j.Audience,
		RoleClaim:    j.RoleClaim,
		SubjectClaim: j.SubjectClaim,
		Leeway:       j.Leeway.Duration,
	}
	switch {
	case j.SecretEnv != "":
		secret := os.Getenv(j.SecretEnv)
		if secret == "" {
			return nil, fmt.Errorf("auth.jwt.secret_env: environment variable %s is empty", j.SecretEnv)
		}
		cfg.Secret = []byte(secret)
	case j.SecretFile != "":
		b, err := os.ReadFile(j.SecretFile)
		if err != nil {
			return nil, fmt.Errorf("auth.jwt.secret_file: %w", err)
		}
		cfg.Secret = []byte(strings.TrimRight(string(b), "\r\n"))
	case j.PublicKeyFile != "":
		b, err := os.ReadFile(j.PublicKeyFile)
		if err != nil {
			return nil, fmt.Errorf("auth.jwt.public_key_file: %w", err)
		}
		cfg.PublicKeyPEM = b
	}
	v, err := auth.NewJWTVerifier(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("auth.jwt: %w", err)
	}
	return v, nil
}
