/* Inventories of the compiled policy used by the kernel layers (oslayer.c):
 * exec= rules and the number of ignore= rules.  Kept apart from the policy
 * engine's own files; reads its internals through pol_int.h. */
#include "config.h"

#include "pol_int.h"
#include "policy.h"

int sb_policy_foreach_exec(const struct sb_policy *p,
			   int (*fn)(const char *pattern, bool glob, void *data), void *data)
{
	for (size_t i = 0; i < p->exec.n; i++) {
		const struct pol_exec_rule *r = POL_VEC_AT(&p->exec, struct pol_exec_rule, i);
		int rc;

		if (!r->pattern || !*r->pattern)
			continue;	/* a rule that failed to parse allows nothing */
		rc = fn(r->pattern, r->glob, data);
		if (rc)
			return rc;
	}
	return 0;
}

size_t sb_policy_n_ignores(const struct sb_policy *p)
{
	return p->ignores.n;
}
