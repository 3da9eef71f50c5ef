/* SPDX-License-Identifier: MIT
 *
 * vmp_demangle.c - a compact Itanium C++ ABI demangler for the names of a
 * VM's runtime symbols (spec.md §5.3: symbol names are stored raw/mangled).
 *
 * Supported: _Z encodings whose name is a source name, a nested name
 * (N [K] prefix E) or St-prefixed; constructors (C1-C3) and destructors
 * (D0-D2); substitutions S_ / S<seq>_ and St/Sa/Ss; parameter types made of
 * builtins, class names, pointers, references and const.  Anything else fails
 * cleanly and the caller shows the raw name.
 */
#include <stdio.h>
#include <string.h>

#include "vmp_analyze.h"

#define DM_MAX_TEXT 512
#define DM_MAX_SUBS 32
/* Types nested deeper than this (P, R, O, K, nested names) are not
 * demangled: the name is shown as stored, and the C stack stays small. */
#define DM_MAX_DEPTH 64

typedef struct dm_text {
    char s[DM_MAX_TEXT];
    size_t n;
} dm_text;

typedef struct dm_state {
    const char *p;
    int ok;
    dm_text subs[DM_MAX_SUBS];
    size_t n_subs;
    unsigned depth; /* nesting of type(): bounded, a name may be hostile */
} dm_state;

static void text_set(dm_text *t, const char *s, size_t n)
{
    if (n >= DM_MAX_TEXT)
        n = DM_MAX_TEXT - 1;
    memcpy(t->s, s, n);
    t->n = n;
    t->s[n] = '\0';
}

static void text_add(dm_state *st, dm_text *t, const char *s, size_t n)
{
    if (t->n + n >= DM_MAX_TEXT) {
        st->ok = 0;
        return;
    }
    memcpy(t->s + t->n, s, n);
    t->n += n;
    t->s[t->n] = '\0';
}

static void text_adds(dm_state *st, dm_text *t, const char *s)
{
    text_add(st, t, s, strlen(s));
}

static void add_sub(dm_state *st, const dm_text *t)
{
    if (st->n_subs < DM_MAX_SUBS)
        st->subs[st->n_subs++] = *t;
}

/* <source-name> ::= <positive length number> <identifier> */
static int source_name(dm_state *st, dm_text *out)
{
    size_t len = 0;
    if (*st->p < '0' || *st->p > '9')
        return 0;
    while (*st->p >= '0' && *st->p <= '9') {
        len = len * 10 + (size_t)(*st->p - '0');
        if (len > 4096)
            return 0;
        st->p++;
    }
    if (len == 0 || strnlen(st->p, len) < len)
        return 0;
    text_set(out, st->p, len);
    st->p += len;
    return 1;
}

/* <substitution> ::= S_ | S <seq-id> _ | St | Sa | Ss; returns 1 and the text. */
static int substitution(dm_state *st, dm_text *out)
{
    size_t idx = 0;
    if (st->p[0] != 'S')
        return 0;
    if (st->p[1] == 'a' || st->p[1] == 's') {
        text_set(out, st->p[1] == 'a' ? "std::allocator" : "std::string",
                 st->p[1] == 'a' ? 14 : 11);
        st->p += 2;
        return 1;
    }
    if (st->p[1] == '_') {
        st->p += 2;
        idx = 0;
    } else {
        const char *q = st->p + 1;
        size_t seq = 0;
        int digits = 0;
        while ((*q >= '0' && *q <= '9') || (*q >= 'A' && *q <= 'Z')) {
            seq = seq * 36 + (size_t)(*q >= 'A' ? *q - 'A' + 10 : *q - '0');
            q++;
            digits++;
        }
        if (!digits || *q != '_')
            return 0;
        st->p = q + 1;
        idx = seq + 1;
    }
    if (idx >= st->n_subs)
        return 0;
    *out = st->subs[idx];
    return 1;
}

/* The prefix components of a nested name, up to E.  `last` receives the last
 * source name (for constructors).  Every prefix is a substitution candidate;
 * for a function name the complete name is not (`is_type` == 0). */
static int nested_name(dm_state *st, dm_text *out, int is_type, int *is_const)
{
    dm_text last = {{0}, 0};
    out->n = 0;
    out->s[0] = '\0';
    if (*st->p == 'K') {
        *is_const = 1;
        st->p++;
    }
    while (st->ok && *st->p != 'E') {
        dm_text comp;
        if (*st->p == 'S' && st->p[1] == 't') {
            st->p += 2;
            text_adds(st, out, "std");
            continue;
        }
        if (*st->p == 'S') {
            if (!substitution(st, &comp) || out->n != 0)
                return 0;
            *out = comp;
            /* the last component of the substituted prefix */
            {
                const char *c = strrchr(comp.s, ':');
                text_set(&last, c ? c + 1 : comp.s, strlen(c ? c + 1 : comp.s));
            }
            continue;
        }
        if (*st->p == 'C' && st->p[1] >= '1' && st->p[1] <= '3') {
            st->p += 2;
            comp = last;
        } else if (*st->p == 'D' && st->p[1] >= '0' && st->p[1] <= '2') {
            st->p += 2;
            text_set(&comp, "~", 1);
            text_add(st, &comp, last.s, last.n);
        } else if (source_name(st, &comp)) {
            last = comp;
        } else {
            return 0;
        }
        if (out->n)
            text_adds(st, out, "::");
        text_add(st, out, comp.s, comp.n);
        if (*st->p != 'E' || is_type)
            add_sub(st, out);
    }
    if (*st->p != 'E' || out->n == 0)
        return 0;
    st->p++;
    return st->ok;
}

static const char *builtin(char c)
{
    switch (c) {
    case 'v':
        return "void";
    case 'b':
        return "bool";
    case 'c':
        return "char";
    case 'a':
        return "signed char";
    case 'h':
        return "unsigned char";
    case 's':
        return "short";
    case 't':
        return "unsigned short";
    case 'i':
        return "int";
    case 'j':
        return "unsigned int";
    case 'l':
        return "long";
    case 'm':
        return "unsigned long";
    case 'x':
        return "long long";
    case 'y':
        return "unsigned long long";
    case 'f':
        return "float";
    case 'd':
        return "double";
    case 'e':
        return "long double";
    case 'w':
        return "wchar_t";
    case 'z':
        return "...";
    default:
        return NULL;
    }
}

static int type_at(dm_state *st, dm_text *out);

static int type(dm_state *st, dm_text *out)
{
    int ok;
    if (st->depth >= DM_MAX_DEPTH) {
        st->ok = 0;
        return 0;
    }
    st->depth++;
    ok = type_at(st, out);
    st->depth--;
    return ok;
}

static int type_at(dm_state *st, dm_text *out)
{
    const char *b = builtin(*st->p);
    int dummy = 0;
    if (b) {
        st->p++;
        text_set(out, b, strlen(b));
        return 1;
    }
    switch (*st->p) {
    case 'P':
    case 'R':
    case 'O':
    case 'K': {
        char c = *st->p++;
        if (!type(st, out))
            return 0;
        text_adds(st, out, c == 'P' ? "*" : c == 'R' ? "&" : c == 'O' ? "&&" : " const");
        add_sub(st, out);
        return st->ok;
    }
    case 'N':
        st->p++;
        return nested_name(st, out, 1, &dummy);
    case 'S':
        if (st->p[1] == 't') {
            dm_text n;
            st->p += 2;
            if (!source_name(st, &n))
                return 0;
            text_set(out, "std::", 5);
            text_add(st, out, n.s, n.n);
            add_sub(st, out);
            return st->ok;
        }
        return substitution(st, out);
    default:
        if (!source_name(st, out))
            return 0;
        add_sub(st, out);
        return 1;
    }
}

/* The longest mangled name (before a clone suffix) that is demangled. */
#define DM_NAME_MAX 4096

size_t vmp_demangle(char *out, size_t size, const char *name)
{
    dm_state st;
    dm_text res, nm;
    int is_const = 0;
    size_t nparams = 0;
    char base[DM_NAME_MAX];
    const char *clone;

    if (!name || name[0] != '_' || name[1] != 'Z')
        return 0;
    /* A compiler's clone of a function (".constprop.0", ".isra.0", ".part.0",
     * ".cold") carries its suffix after the mangled name, which never holds a
     * '.': demangle the name and add " [clone .suffix]" as c++filt does. */
    clone = strchr(name, '.');
    if (clone != NULL) {
        size_t n = (size_t)(clone - name);
        if (n >= sizeof base)
            return 0;
        memcpy(base, name, n);
        base[n] = '\0';
        name = base;
    }
    memset(&st, 0, sizeof st);
    st.p = name + 2;
    st.ok = 1;
    if (*st.p == 'N') {
        st.p++;
        if (!nested_name(&st, &nm, 0, &is_const))
            return 0;
    } else if (st.p[0] == 'S' && st.p[1] == 't') {
        dm_text n;
        st.p += 2;
        if (!source_name(&st, &n))
            return 0;
        text_set(&nm, "std::", 5);
        text_add(&st, &nm, n.s, n.n);
    } else if (!source_name(&st, &nm)) {
        return 0;
    }
    res = nm;
    if (*st.p != '\0') {
        text_adds(&st, &res, "(");
        if (st.p[0] == 'v' && st.p[1] == '\0') {
            st.p++;
        } else {
            while (st.ok && *st.p != '\0') {
                dm_text t;
                if (!type(&st, &t))
                    return 0;
                if (nparams++)
                    text_adds(&st, &res, ", ");
                text_add(&st, &res, t.s, t.n);
            }
        }
        text_adds(&st, &res, ")");
        if (is_const)
            text_adds(&st, &res, " const");
    }
    if (clone != NULL) {
        text_adds(&st, &res, " [clone ");
        text_adds(&st, &res, clone);
        text_adds(&st, &res, "]");
    }
    if (!st.ok)
        return 0;
    if (size) {
        size_t n = res.n < size ? res.n : size - 1;
        memcpy(out, res.s, n);
        out[n] = '\0';
    }
    return res.n;
}
