# Per-page crawl value of freshcore._value, cimportable by the scheduler:
# ``from freshcore._value cimport page_value``; see the docstring of _value.pyx.

cdef double greedy_value(double iota, double delta, double mu) noexcept nogil
cdef double greedy_value_ex(double iota, double delta, double mu, double* ex) noexcept nogil
cdef double page_value(double iota, double delta, double alpha, double gamma, double nu,
                       double beta, double mu, long terms) noexcept nogil
cdef double cis_value(double iota, double delta, double recall, double alpha, double mu) noexcept nogil
cdef double crawl_interval(double iota, double delta, double gamma, double nu, double beta) noexcept nogil
cdef double fresh_time(double iota, double delta, double gamma, double nu, double beta) noexcept nogil
cdef long best_signal_count(double lam, double mu, double delta, double nu) noexcept nogil
cdef double signal_beta(double delta, double recall, double nu) noexcept nogil
