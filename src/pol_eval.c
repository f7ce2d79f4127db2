/* eval-* keys (reference §2.8 and §7): five list keys that accumulate (DENY:
 * wins wherever it sits) and eight scalar keys set once per profile;
 * eval-<key>:<name>= defines an independent named profile.  The policy only
 * validates and stores them: the in-interpreter agent enforces them. */
#include "config.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "eval_groups.h"
#include "pol_int.h"

const char *const pol_eval_list_keys[POL_EV__LISTS] = {
	"eval-syntax", "eval-call", "eval-attribute", "eval-import", "eval-magic",
};

const char *const pol_eval_scalar_keys[POL_EV__SCALARS] = {
	"eval-namespace", "eval-timeout", "eval-max-iterations", "eval-max-call-depth",
	"eval-max-depth", "eval-max-nodes", "eval-max-alloc", "eval-max-leaked-threads",
};

const long long pol_eval_defaults[POL_EV__SCALARS] = {
	[POL_EV_NAMESPACE] = 0, [POL_EV_TIMEOUT] = 5000, [POL_EV_MAX_ITERATIONS] = 1000000,
	[POL_EV_MAX_CALL_DEPTH] = 20, [POL_EV_MAX_DEPTH] = 20, [POL_EV_MAX_NODES] = 5000,
	[POL_EV_MAX_ALLOC] = 10000000, [POL_EV_MAX_LEAKED_THREADS] = 4,
};

#define GROUP_NAME(name, ...) name,
static const char *const syntax_groups[] = { SB_EVAL_GROUPS(GROUP_NAME) NULL };
#undef GROUP_NAME

/* AST node classes of CPython 3.10-3.14 (deprecated aliases excluded). */
static const char *const ast_nodes[] = {
	"AST", "Add", "And", "AnnAssign", "Assert", "Assign", "AsyncFor", "AsyncFunctionDef", "AsyncWith",
	"Attribute", "AugAssign", "Await", "BinOp", "BitAnd", "BitOr", "BitXor", "BoolOp", "Break", "Call",
	"ClassDef", "Compare", "Constant", "Continue", "Del", "Delete", "Dict", "DictComp", "Div", "Eq",
	"ExceptHandler", "Expr", "Expression", "FloorDiv", "For", "FormattedValue", "FunctionDef",
	"FunctionType", "GeneratorExp", "Global", "Gt", "GtE", "If", "IfExp", "Import", "ImportFrom", "In",
	"Interactive", "Interpolation", "Invert", "Is", "IsNot", "JoinedStr", "LShift", "Lambda", "List",
	"ListComp", "Load", "Lt", "LtE", "MatMult", "Match", "MatchAs", "MatchClass", "MatchMapping",
	"MatchOr", "MatchSequence", "MatchSingleton", "MatchStar", "MatchValue", "Mod", "Module", "Mult",
	"Name", "NamedExpr", "Nonlocal", "Not", "NotEq", "NotIn", "Or", "ParamSpec", "Pass", "Pow",
	"RShift", "Raise", "Return", "Set", "SetComp", "Slice", "Starred", "Store", "Sub", "Subscript",
	"TemplateStr", "Try", "TryStar", "Tuple", "TypeAlias", "TypeIgnore", "TypeVar", "TypeVarTuple",
	"UAdd", "USub", "UnaryOp", "While", "With", "Yield", "YieldFrom", "alias", "arg", "arguments",
	"boolop", "cmpop", "comprehension", "excepthandler", "expr", "expr_context", "keyword",
	"match_case", "mod", "operator", "pattern", "slice", "stmt", "type_ignore", "type_param",
	"unaryop", "withitem", NULL,
};

/* Every eval key, for the closest-match suggestion. */
static const char *const eval_keys[] = {
	"eval-attribute", "eval-call", "eval-import", "eval-magic", "eval-syntax", "eval-max-alloc",
	"eval-timeout", "eval-max-iterations", "eval-max-call-depth", "eval-max-depth", "eval-max-nodes",
	"eval-max-leaked-threads", "eval-namespace", NULL,
};

static const char *const sensitive_calls[] = {
	"getattr", "setattr", "delattr", "vars", "hasattr", "dir", "globals", "type", "breakpoint",
	"open", "eval", "exec", "compile", "__import__", NULL,
};

static bool in_list(const char *s, const char *const *l)
{
	for (; *l; l++)
		if (!strcmp(s, *l))
			return true;
	return false;
}

bool sb_eval_syntax_known(const char *tok)
{
	return in_list(tok, syntax_groups) || in_list(tok, ast_nodes);
}

/* ", closest known token is 'x'" when one is close enough (difflib's 0.6). */
static const char *suggest(struct pol_ctx *c, const char *tok, const char *const *a, const char *const *b)
{
	const char *best = NULL;
	double score = 0.6 - 1e-9;

	for (int k = 0; k < 2; k++)
		for (const char *const *l = k ? b : a; l && *l; l++) {
			double s = pol_similarity(tok, *l);
			if (s > score) {
				score = s;
				best = *l;
			}
		}
	if (!best)
		return "";
	const char *r = pol_printf(&c->p->arena, ", closest known token is '%s'", best);
	return r ? r : "";
}

static struct pol_eval_profile *profile(struct pol_ctx *c, const char *name)
{
	struct pol_eval_profile *pr;

	for (size_t i = 0; i < c->p->eval.n; i++) {
		pr = POL_VEC_AT(&c->p->eval, struct pol_eval_profile, i);
		if (!strcmp(pr->name, name))
			return pr;
	}
	pr = pol_vec_push(&c->p->eval);
	if (!pr)
		return NULL;
	pr->name = name;
	for (int k = 0; k < POL_EV__LISTS; k++)
		pr->list[k] = (struct pol_vec)POL_VEC_INIT(const char *);
	for (int k = 0; k < POL_EV__SCALARS; k++)
		pr->value[k] = pol_eval_defaults[k];
	pr->ns = "adaptive";
	return pr;
}

static void parse_list(struct pol_ctx *c, struct pol_line *l, struct pol_eval_profile *pr, int k, const char *value)
{
	const char *key = pol_eval_list_keys[k];
	bool deny = !strncmp(value, "DENY:", 5);

	for (const char *p = deny ? value + 5 : value;;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		while (n && isspace((unsigned char)*p)) {
			p++;
			n--;
		}
		while (n && isspace((unsigned char)p[n - 1]))
			n--;
		char *tok = pol_strndup(&c->p->arena, p, n);
		if (!tok)
			return pol_oom(c);
		if (!*tok) {
			pol_err(c, l, "In '%s', empty target.", l->ref.text);
			return;
		}
		if (!strncmp(tok, "DENY:", 5)) {
			pol_err(c, l, "In '%s', DENY: applies to a whole line; put `%s=%s` on a line of its own.", l->ref.text,
				key, tok);
			return;
		}
		if (strchr(tok, '*') && k == POL_EV_SYNTAX) {
			pol_err(c, l, "In '%s', a pattern is not accepted on %s: the vocabulary is finite.", l->ref.text, key);
			return;
		}
		if (k == POL_EV_SYNTAX && !sb_eval_syntax_known(tok)) {
			pol_err(c, l, "In '%s', unknown syntax token '%s'%s.", l->ref.text, tok,
				suggest(c, tok, syntax_groups, ast_nodes));
			return;
		}
		if (!deny && k == POL_EV_ATTRIBUTE && (!strcmp(tok, "format") || !strcmp(tok, "format_map")))
			pol_warn(c, l,
				 "eval-attribute=%s grants a method that resolves attributes in C from the contents of the string: its template is checked at run time, field by field.",
				 tok);
		if (!deny && k == POL_EV_CALL && in_list(tok, sensitive_calls))
			pol_warn(c, l,
				 "eval-call=%s grants a sensitive builtin: it is neutralised by a guarded shim or reaches its own guard, but it widens the reachable surface.",
				 tok);
		const char **slot = pol_vec_push(&pr->list[k]);
		if (!slot || !(*slot = deny ? pol_printf(&c->p->arena, "DENY:%s", tok) : tok))
			return pol_oom(c);
		if (!e)
			return;
		p = e + 1;
	}
}

/* Python's float() on a plain decimal number. */
static bool py_float(const char *s, double *out)
{
	char *end;

	if (!*s || strspn(s, "0123456789.eE+-") != strlen(s))
		return false;
	*out = strtod(s, &end);
	return !*end && isfinite(*out);
}

static bool py_int(const char *s, long long *out)
{
	char *end;

	if (!*s || strspn(s + (*s == '+' || *s == '-'), "0123456789") != strlen(s + (*s == '+' || *s == '-')) ||
	    !s[*s == '+' || *s == '-'])
		return false;
	errno = 0;
	*out = strtoll(s, &end, 10);
	return !*end && !errno;
}

static void parse_scalar(struct pol_ctx *c, struct pol_line *l, struct pol_eval_profile *pr, int k, const char *value)
{
	const char *key = pol_eval_scalar_keys[k];
	char raw[128];
	size_t o = 0, n;
	double f;
	long long v;

	if (!strncmp(value, "DENY:", 5) || strchr(value, '*')) {
		pol_err(c, l, "In '%s', %s: `DENY:` and patterns apply to list keys only.", l->ref.text, key);
		return;
	}
	if (k == POL_EV_NAMESPACE) {
		if (strcmp(value, "adaptive") && strcmp(value, "closed") && strcmp(value, "caller"))
			pol_err(c, l, "In '%s', %s: unknown mode '%s', expected one of ['adaptive', 'closed', 'caller'].",
				l->ref.text, key, value);
		else
			pr->ns = value;
		return;
	}
	for (const char *s = value; *s && o + 1 < sizeof(raw); s++)
		if (*s != '_')
			raw[o++] = *s;
	raw[o] = 0;
	n = o;
	if (k == POL_EV_TIMEOUT) {
		double mult = 1000.0;

		if (n > 2 && !strcmp(raw + n - 2, "ms"))
			mult = 1.0, raw[n - 2] = 0;
		else if (n > 1 && raw[n - 1] == 's')
			raw[n - 1] = 0;
		else if (n > 1 && raw[n - 1] == 'm')
			mult = 60000.0, raw[n - 1] = 0;
		if (!py_float(raw, &f)) {
			pol_err(c, l, "In '%s', could not convert string to float: '%s'", l->ref.text, raw);
			return;
		}
		v = (long long)llround(f * mult);
		if (f < 0 || f * mult > 9e15) {
			pol_err(c, l, "In '%s', %s: the value must be a positive duration.", l->ref.text, key);
			return;
		}
	} else if (k == POL_EV_MAX_ALLOC && n > 2 &&
		   (!strcasecmp(raw + n - 2, "KB") || !strcasecmp(raw + n - 2, "MB") || !strcasecmp(raw + n - 2, "GB"))) {
		char unit = (char)toupper((unsigned char)raw[n - 2]);
		double mult = unit == 'K' ? 1e3 : unit == 'M' ? 1e6 : 1e9;

		raw[n - 2] = 0;
		if (!py_float(raw, &f)) {
			pol_err(c, l, "In '%s', could not convert string to float: '%s'", l->ref.text, raw);
			return;
		}
		if (f < 0 || f * mult > 9e18) {
			pol_err(c, l, "In '%s', %s: the value must not be negative.", l->ref.text, key);
			return;
		}
		v = (long long)(f * mult);
	} else if (!py_int(raw, &v)) {
		pol_err(c, l, "In '%s', invalid literal for int() with base 10: '%s'", l->ref.text, raw);
		return;
	}
	if (v < 0) {
		pol_err(c, l, "In '%s', %s: the value must not be negative.", l->ref.text, key);
		return;
	}
	pr->value[k] = v;
}

static void parse_eval_line(struct pol_ctx *c, struct pol_line *l)
{
	const char *colon = memchr(l->ref.text, ':', l->keylen);
	size_t klen = colon ? (size_t)(colon - l->ref.text) : l->keylen;
	char *key = pol_strndup(&c->p->arena, l->ref.text, klen);
	char *name = colon ? pol_strndup(&c->p->arena, colon + 1, l->keylen - klen - 1) : "";
	const char *value = l->value;
	struct pol_eval_profile *pr;
	size_t vn;

	if (!key || !name)
		return pol_oom(c);
	while (isspace((unsigned char)*value))
		value++;
	vn = strlen(value);
	while (vn && isspace((unsigned char)value[vn - 1]))
		vn--;
	if (!(value = pol_strndup(&c->p->arena, value, vn)))
		return pol_oom(c);
	for (int k = 0; k < POL_EV__LISTS; k++)
		if (!strcmp(key, pol_eval_list_keys[k])) {
			if (!(pr = profile(c, name)))
				return pol_oom(c);
			return parse_list(c, l, pr, k, value);
		}
	for (int k = 0; k < POL_EV__SCALARS; k++)
		if (!strcmp(key, pol_eval_scalar_keys[k])) {
			if (!(pr = profile(c, name)))
				return pol_oom(c);
			if (pr->scalar_ref[k]) {
				pol_err(c, l, "In '%s', %s is set twice in this profile (already at line %u): a scalar is not a set.",
					l->ref.text, key, pr->scalar_ref[k]->line);
				return;
			}
			pr->scalar_ref[k] = &l->ref;
			return parse_scalar(c, l, pr, k, value);
		}
	pol_err(c, l, "In '%s', unknown key '%s'%s.", l->ref.text, key,
		suggest(c, key, eval_keys, NULL));
}

void pol_parse_eval(struct pol_ctx *c)
{
	for (size_t i = 0; i < c->lines.n; i++) {
		struct pol_line *l = pol_line_at(c, i);

		if (l->claimed || l->keylen < 5 || strncmp(l->ref.text, "eval-", 5) || l->ref.text[l->keylen] != '=')
			continue;
		l->claimed = true;
		parse_eval_line(c, l);
	}
}

bool sb_policy_eval_namespace_set(const struct sb_policy *p, const char *name)
{
	for (size_t i = 0; p && i < p->eval.n; i++) {
		const struct pol_eval_profile *pr = POL_VEC_AT(&p->eval, struct pol_eval_profile, i);

		if (!strcmp(pr->name, name))
			return pr->scalar_ref[POL_EV_NAMESPACE] != NULL;
	}
	return false;
}
