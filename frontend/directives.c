/*
** frontend/directives.c: the lang: directives (inputs and outputs).
**
** Owns: checking lang:input, lang:input:delimiter, lang:input:header,
** lang:input:key, lang:output, lang:output:orderBy and lang:output:limit,
** and recording them on their predicates.
*/
#include "check_internal.h"
#include "rf_file.h"

#include <stdlib.h>
#include <string.h>

typedef enum { D_INPUT, D_DELIM, D_HEADER, D_KEY, D_OUTPUT, D_ORDER, D_LIMIT } dkind;

static const struct {
    const char *name;
    dkind kind;
    rf_type type;
} directives[] = {
    {"lang:input", D_INPUT, RF_TYPE_STRING},
    {"lang:input:delimiter", D_DELIM, RF_TYPE_STRING},
    {"lang:input:header", D_HEADER, RF_TYPE_BOOL},
    {"lang:input:key", D_KEY, RF_TYPE_STRING},
    {"lang:output", D_OUTPUT, RF_TYPE_STRING},
    {"lang:output:orderBy", D_ORDER, RF_TYPE_STRING},
    {"lang:output:limit", D_LIMIT, RF_TYPE_INT},
};

static rf_type literal_type(const rf_ast_expr *e)
{
    switch (e->kind) {
    case RF_AST_STRING: return RF_TYPE_STRING;
    case RF_AST_BOOL: return RF_TYPE_BOOL;
    case RF_AST_INT: return RF_TYPE_INT;
    case RF_AST_DECIMAL: return RF_TYPE_DECIMAL;
    case RF_AST_FLOAT: return RF_TYPE_FLOAT;
    default: return (rf_type)-1;
    }
}

/* "2 desc, 3" -> [(1, desc), (2, asc)] (0-based columns) */
static int parse_order(rf_checker *c, rf_fe_pred *p, const rf_ast_expr *v)
{
    const char *s = v->sval;
    int32_t n = 0, cap = 4;
    rf_fe_order *o = rf_arena_alloc(c->a, (size_t)cap * sizeof *o);
    if (!o) {
        c->oom = 1;
        return -1;
    }
    for (;;) {
        while (*s == ' ' || *s == '\t') s++;
        if (*s < '0' || *s > '9') goto bad;
        int64_t col = 0;
        while (*s >= '0' && *s <= '9') {
            col = col * 10 + (*s++ - '0');
            if (col > 1000000) goto bad;
        }
        if (col < 1 || col > p->arity) {
            rf_error(c->d, v->loc, "lang:output:orderBy of `%s`: column %lld does not exist (it has %d columns)",
                     p->name, (long long)col, p->arity);
            return -1;
        }
        while (*s == ' ' || *s == '\t') s++;
        int desc = 0;
        if (strncmp(s, "desc", 4) == 0) {
            desc = 1;
            s += 4;
        } else if (strncmp(s, "asc", 3) == 0) {
            s += 3;
        }
        while (*s == ' ' || *s == '\t') s++;
        if (n == cap) {
            rf_fe_order *m = rf_arena_alloc(c->a, (size_t)cap * 2 * sizeof *m);
            if (!m) {
                c->oom = 1;
                return -1;
            }
            memcpy(m, o, (size_t)n * sizeof *o);
            o = m;
            cap *= 2;
        }
        o[n].col = (int32_t)(col - 1);
        o[n].desc = desc;
        n++;
        if (*s == 0) break;
        if (*s != ',') goto bad;
        s++;
    }
    p->order = o;
    p->norder = n;
    return 0;
bad:
    rf_error(c->d, v->loc,
             "lang:output:orderBy of `%s` must be a list of 1-based column numbers, each optionally followed by asc or desc, like \"2 desc, 1\"",
             p->name);
    return -1;
}

/* "l_orderkey, l_linenumber" -> the 0-based columns of those names */
static void parse_key(rf_checker *c, rf_fe_pred *p, const rf_ast_expr *v)
{
    const char *s = v->sval, *end = v->sval + v->slen;
    int32_t *cols = rf_arena_alloc(c->a, (size_t)(p->arity + 1) * sizeof *cols);
    if (!cols) {
        c->oom = 1;
        return;
    }
    int32_t n = 0;
    for (;;) {
        while (s < end && (*s == ' ' || *s == '\t')) s++;
        const char *w = s;
        while (s < end && *s != ',' && *s != ' ' && *s != '\t') s++;
        int64_t wl = s - w;
        while (s < end && (*s == ' ' || *s == '\t')) s++;
        if (wl == 0 || (s < end && *s != ',')) {
            rf_error(c->d, v->loc,
                     "lang:input:key of `%s` must be a list of its column names, like \"%s\"", p->name,
                     p->arity > 0 && p->cols && p->cols[0] ? p->cols[0] : "c1, c2");
            return;
        }
        int32_t col = -1;
        for (int32_t i = 0; i < p->arity && col < 0; i++)
            if (p->cols && p->cols[i] && (int64_t)strlen(p->cols[i]) == wl && !memcmp(p->cols[i], w, (size_t)wl)) col = i;
        if (col < 0) {
            rf_error(c->d, v->loc, "lang:input:key of `%s`: `%.*s` is not one of its columns", p->name, (int)wl, w);
            return;
        }
        for (int32_t i = 0; i < n; i++)
            if (cols[i] == col) {
                rf_error(c->d, v->loc, "lang:input:key of `%s` names `%s` twice", p->name, p->cols[col]);
                return;
            }
        cols[n++] = col;
        if (s == end) break;
        s++; /* the comma */
    }
    p->input_key = cols;
    p->ninput_key = n;
}

static void directive(rf_checker *c, const rf_ast_atom *h, uint8_t *seen)
{
    int64_t k = -1;
    for (int64_t i = 0; i < RF_ARRAY_LEN(directives); i++)
        if (strcmp(directives[i].name, h->name) == 0) k = i;
    if (k < 0) {
        const char *names[RF_ARRAY_LEN(directives)];
        for (int64_t i = 0; i < RF_ARRAY_LEN(directives); i++) names[i] = directives[i].name;
        const char *near = rf_chk_suggest(h->name, names, RF_ARRAY_LEN(directives));
        if (near)
            rf_error(c->d, h->loc, "unknown directive `%s`; did you mean `%s`?", h->name, near);
        else
            rf_error(c->d, h->loc,
                     "unknown directive `%s` (known: lang:input, lang:input:delimiter, lang:input:header, lang:input:key, lang:output, lang:output:orderBy, lang:output:limit)",
                     h->name);
        return;
    }
    if (!h->functional || h->nargs != 2 || h->args[0]->kind != RF_AST_PREDREF) {
        rf_error(c->d, h->loc, "write the directive as %s[`predicate] = value.", h->name);
        return;
    }
    const rf_ast_expr *v = h->args[1];
    rf_type want = directives[k].type;
    if (literal_type(v) != want) {
        rf_error(c->d, v->loc, "the value of %s must be %s %s literal", h->name,
                 want == RF_TYPE_INT ? "an" : "a", rf_fe_type_name(want));
        return;
    }
    rf_fe_pred *p = rf_chk_find(c, h->args[0]->sval);
    if (!p) {
        const char *near = rf_chk_suggest_name(c, h->args[0]->sval, 0);
        if (rf_chk_in_broken_clause(c, h->args[0]->sval)) return; /* its clause had a syntax error */
        rf_error(c->d, h->args[0]->loc, "%s names `%s`, which is not declared or defined%s%s%s", h->name,
                 h->args[0]->sval, near ? "; did you mean `" : "", near ? near : "", near ? "`?" : "");
        return;
    }
    uint8_t *flag = &seen[(int64_t)p->id * RF_ARRAY_LEN(directives) + k];
    if (*flag) {
        rf_error(c->d, h->loc, "%s is given twice for `%s`", h->name, p->name);
        return;
    }
    *flag = 1;
    switch (directives[k].kind) {
    case D_INPUT:
        if (!p->declared) {
            rf_error(c->d, h->loc, "input predicate `%s` must be declared with its column types", p->name);
            return;
        }
        if (p->arity == 0) {
            /* a file of rows without fields says nothing a fact cannot */
            rf_error(c->d, h->loc,
                     "`%s` has no columns and cannot be read from a file; state it with the fact %s(). or derive it by a rule",
                     p->name, p->name);
            return;
        }
        if (p->nrules) {
            char where[320];
            rf_error(c->d, h->loc, "`%s` is an input and cannot also have rules or facts (%s)", p->name,
                     rf_chk_where(p->rules[0]->loc, h->loc, where, sizeof where));
            return;
        }
        if (v->slen == 0 || memchr(v->sval, 0, (size_t)v->slen)) {
            rf_error(c->d, v->loc, "lang:input of `%s` needs a file name", p->name);
            return;
        }
        /* files are named within the data folder (--data DIR, a database's
        ** tables by their name): "/x" was read as DIR//x, never as itself,
        ** and a program meant for any data folder names none of its own */
        if (v->sval[0] == '/') {
            rf_error(c->d, v->loc,
                     "lang:input of `%s` is an absolute path (\"%s\"): input files are read from the data folder "
                     "(--data DIR), so name the file relative to it",
                     p->name, v->sval);
            return;
        }
        /* "./t.txt" and "t.txt" are one file, and must be one table of a
        ** database (and one reading of a FIFO at import) */
        char *name = rf_arena_strdup(c->a, v->sval);
        if (!name) {
            rf_error(c->d, v->loc, "out of memory");
            return;
        }
        rf_file_name_tidy(name);
        p->input_file = name;
        break;
    case D_DELIM:
        /* say what was found: "é" is one character to its writer but two
        ** bytes to a reader that splits fields on a byte */
        if (v->slen == 0) {
            rf_error(c->d, v->loc, "the delimiter is empty: it must be one ASCII character");
            return;
        }
        if (v->slen > 1) {
            rf_error(c->d, v->loc, "the delimiter is %lld bytes, not one ASCII character", (long long)v->slen);
            return;
        }
        if (v->sval[0] == '\n' || v->sval[0] == '\r') {
            rf_error(c->d, v->loc, "the delimiter cannot be a line end (%s): line ends separate records",
                     v->sval[0] == '\n' ? "\\n" : "\\r");
            return;
        }
        if (v->sval[0] == 0 || (unsigned char)v->sval[0] >= 0x80) {
            rf_error(c->d, v->loc, "the delimiter is the byte 0x%02x, not an ASCII character",
                     (unsigned)(unsigned char)v->sval[0]);
            return;
        }
        if (v->sval[0] == '"') {
            rf_error(c->d, v->loc, "the delimiter cannot be '\"': it quotes fields (RFC 4180)");
            return;
        }
        p->delimiter = v->sval[0];
        break;
    case D_HEADER: p->header = (int)v->ival; break;
    case D_KEY: parse_key(c, p, v); break;
    case D_OUTPUT: {
        /* a control character (a line end, a tab) would name a file no
        ** one can type, and break the "NAME (N rows)" line it heads */
        int ctl = 0;
        for (int64_t i = 0; i < v->slen; i++) ctl |= (unsigned char)v->sval[i] < 0x20 || v->sval[i] == 0x7f;
        if (ctl) {
            rf_error(c->d, v->loc, "the output name must be a plain file name: it holds a control character (a line "
                                   "end, a tab)");
            return;
        }
        if (v->slen == 0 || strchr(v->sval, '/') || strchr(v->sval, '\\') || v->sval[0] == '.' ||
            (int64_t)strlen(v->sval) != v->slen) {
            rf_error(c->d, v->loc, "the output name \"%s\" must be a plain file name: not empty, no '/', not starting with '.'",
                     v->sval);
            return;
        }
        /* one name, one file under --out: a second output of that name would
        ** write over the first */
        for (int64_t i = 0; i < c->preds.count; i++) {
            const rf_fe_pred *q = c->preds.items[i];
            if (q != p && q->output_name && !strcmp(q->output_name, v->sval)) {
                rf_error(c->d, v->loc, "the output name \"%s\" is already that of `%s`: each output needs a name of its own",
                         v->sval, q->name);
                return;
            }
        }
        p->output_name = v->sval;
        break;
    }
    case D_ORDER: parse_order(c, p, v); break;
    case D_LIMIT:
        if (v->ival < 0) {
            rf_error(c->d, v->loc, "lang:output:limit must not be negative");
            return;
        }
        p->limit = v->ival;
        break;
    }
}

/* Where the first of the settings `first`..`last` (of directives[]) names p:
** an error about a setting without its main directive points at the
** setting, not at the predicate. */
static rf_loc setting_loc(const rf_ast_program *ast, const rf_fe_pred *p, dkind first, dkind last)
{
    for (int64_t i = 0; i < ast->nclauses; i++) {
        const rf_ast_clause *cl = ast->clauses[i];
        if (cl->kind != RF_CLAUSE_RULE || cl->body) continue;
        for (int32_t h = 0; h < cl->nheads; h++) {
            const rf_ast_atom *a = cl->heads[h];
            if (a->nargs < 1 || a->args[0]->kind != RF_AST_PREDREF || strcmp(a->args[0]->sval, p->name) != 0) continue;
            for (size_t k = 0; k < RF_ARRAY_LEN(directives); k++)
                if (directives[k].kind >= first && directives[k].kind <= last && strcmp(a->name, directives[k].name) == 0)
                    return a->loc;
        }
    }
    return p->loc;
}

void rf_chk_directives(rf_checker *c, const rf_ast_program *ast)
{
    uint8_t *seen = rf_calloc((size_t)(c->preds.count + 1) * RF_ARRAY_LEN(directives), 1);
    if (!seen) {
        c->oom = 1;
        return;
    }
    for (int64_t i = 0; i < ast->nclauses && !c->oom; i++) {
        const rf_ast_clause *cl = ast->clauses[i];
        if (cl->kind != RF_CLAUSE_RULE || cl->body) continue;
        for (int32_t h = 0; h < cl->nheads; h++)
            if (strncmp(cl->heads[h]->name, "lang:", 5) == 0) directive(c, cl->heads[h], seen);
    }
    /* predicates some clause defines, whether or not its rule survived
    ** checking (a rule with an error is dropped: its predicate is not
    ** "without rules", it has a wrong one) */
    uint8_t *defined = rf_calloc((size_t)c->preds.count + 1, 1);
    if (!defined) {
        free(seen);
        c->oom = 1;
        return;
    }
    for (int64_t i = 0; i < ast->nclauses; i++) {
        const rf_ast_clause *cl = ast->clauses[i];
        if (cl->kind != RF_CLAUSE_RULE) continue;
        for (int32_t h = 0; h < cl->nheads; h++) {
            rf_fe_pred *q = rf_chk_find(c, cl->heads[h]->name);
            if (q && q->id >= 0 && q->id < c->preds.count) defined[q->id] = 1;
        }
    }
    /* settings that need their main directive */
    for (int64_t i = 0; i < c->preds.count; i++) {
        rf_fe_pred *p = c->preds.items[i];
        uint8_t *f = &seen[(int64_t)p->id * RF_ARRAY_LEN(directives)];
        /* (a lang:input that was refused has its own error already; one in
        ** a clause dropped for a syntax error may be the missing one) */
        int broken = rf_chk_in_broken_clause(c, p->name);
        if ((f[D_DELIM] || f[D_HEADER] || f[D_KEY]) && !p->input_file && !f[D_INPUT] && !broken)
            rf_error(c->d, setting_loc(ast, p, D_DELIM, D_KEY), "`%s` has lang:input settings but no lang:input", p->name);
        if ((f[D_ORDER] || f[D_LIMIT]) && !p->output_name && !f[D_OUTPUT] && !broken)
            rf_error(c->d, setting_loc(ast, p, D_ORDER, D_LIMIT), "`%s` has lang:output settings but no lang:output",
                     p->name);
        /* not after errors: the rules may have been left out for them */
        if (p->declared && !p->input_file && !p->nrules && !p->aux && !defined[p->id] && !c->d->nerrors)
            rf_diag_add(c->d, RF_SEV_WARNING, p->loc, "`%s` is declared but has no rules, facts or lang:input: it is empty",
                        p->name);
    }
    free(defined);
    free(seen);
}
