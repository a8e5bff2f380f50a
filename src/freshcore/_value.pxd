# Per-page crawl value, crawl interval and fresh time of freshcore._value (the series of
# ``_value.pyx``'s docstring), cimportable by the scheduler (``_schedule.pyx``) and the Theorem 2
# solver (``_thresholds.pyx``): ``from freshcore._value cimport page_value``.

cdef double greedy_value(double iota, double delta, double mu) noexcept nogil
cdef double greedy_value_ex(double iota, double delta, double mu, double* ex) noexcept nogil
cdef double page_value(double iota, double delta, double alpha, double gamma, double nu,
                       double beta, double mu, long terms) noexcept nogil
cdef double cis_value(double iota, double delta, double recall, double alpha, double mu) noexcept nogil
cdef double crawl_interval(double iota, double delta, double gamma, double nu, double beta) noexcept nogil
cdef double fresh_time(double iota, double delta, double alpha, double gamma, double nu,
                       double beta) noexcept nogil
cdef double signal_beta(double delta, double recall, double nu) noexcept nogil
# psi(iota) with psi' and psi'' (dpsi_out may be NULL), and the exact V with psi in one pass
cdef double interval_and_slope(double iota, double delta, double gamma, double nu, double beta,
                               double* dpsi_out) noexcept nogil
cdef double value_and_interval(double iota, double delta, double alpha, double gamma, double nu,
                               double beta, double mu, double* psi_out, double* dpsi_out) noexcept nogil
