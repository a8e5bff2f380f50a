/* The numeric constants of the scheduler (freshcore._schedule and its units).  Why each is what it is:
 * the module notes of freshcore._schedule ("Rounding", "The tick's candidates", "Greedy's park"). */
#ifndef FRESHCORE_SCHEDULE_CONSTANTS_H
#define FRESHCORE_SCHEDULE_CONSTANTS_H

/* relative inflation of a bound: the rounding of the values (~1e-15 relative) and of the key arithmetic */
#define FRESHCORE_BOUND_MARGIN 1e-11
/* factor on a slope before it is rounded up to its bucket's */
#define FRESHCORE_SLOPE_SAFETY (1.0 + 1e-9)
/* 1/e rounded up (0.367879441171442321595...) and e rounded up */
#define FRESHCORE_INV_E_UP 0.36787944117144233
#define FRESHCORE_E_UP 2.7182818284590455
/* relative margin below the last winning value of the tick's candidates */
#define FRESHCORE_PREFILTER 1e-6
/* park keys are the times at which a page reaches park_level (1 - FRESHCORE_PARK_SHADE) */
#define FRESHCORE_PARK_SHADE 1e-9
/* the smallest park margin (the park level's relative distance below the winning value) */
#define FRESHCORE_PARK_EPS 1e-4

#endif /* FRESHCORE_SCHEDULE_CONSTANTS_H */
