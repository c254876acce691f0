package setting

import (
	"errors"
	"fmt"
	"testing"
)

var errShort = errors.New("must be longer")

func TestErrorNamesItsField(t *testing.T) {
	t.Parallel()
	err := Invalid("Secret", "%w (got %d)", errShort, 5)
	if got, want := err.Error(), "Secret must be longer (got 5)"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, errShort) {
		t.Error("the sentinel in the phrase is lost")
	}
}

func TestMapRenamesTheFields(t *testing.T) {
	t.Parallel()
	env := map[string]string{"Secret": "JWT_SECRET", "JWKS.URL": "JWT_JWKS_URL"}
	rename := func(field string) string { return env[field] }
	cases := []struct {
		name string
		err  error
		want string
	}{
		{"one", Invalid("Secret", "%w", errShort), "JWT_SECRET must be longer"},
		{"joined", errors.Join(Invalid("JWKS.URL", "must use https"), Invalid("Leeway", "must not be negative"), errors.New("something else")),
			"JWT_JWKS_URL must use https\nLeeway must not be negative\nsomething else"},
		{"nested joins", errors.Join(errors.Join(Invalid("Secret", "is short"))), "JWT_SECRET is short"},
		{"wrapped in text of its own", fmt.Errorf("auth: %w", Invalid("Secret", "is short")), "auth: Secret is short"},
		{"two wrapped in text of their own", fmt.Errorf("auth: %w; %w", Invalid("Secret", "is short"), errShort), "auth: Secret is short; must be longer"},
		{"none", nil, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			got := Map(tc.err, rename)
			if (got == nil) != (tc.err == nil) || got != nil && got.Error() != tc.want {
				t.Fatalf("Map = %v, want %q", got, tc.want)
			}
			if tc.err != nil && errors.Is(tc.err, errShort) && !errors.Is(got, errShort) {
				t.Error("the sentinel is lost")
			}
		})
	}
}

func TestWithinNamesTheParent(t *testing.T) {
	t.Parallel()
	err := Within("Limits", errors.Join(Invalid("MaxTokens", "must be positive, got 0"), Invalid("TurnTimeout", "must be positive, got 0s")))
	if got, want := err.Error(), "Limits.MaxTokens must be positive, got 0\nLimits.TurnTimeout must be positive, got 0s"; got != want {
		t.Errorf("Within = %q, want %q", got, want)
	}
	var e *Error
	if !errors.As(err, &e) || e.Field != "Limits.MaxTokens" {
		t.Errorf("the first problem's field is %+v", e)
	}
}
