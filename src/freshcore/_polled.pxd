# Per-page crawl value of polled signals (freshcore._polled; the algorithm is in _polled.pyx's docstring),
# cimportable by the scheduler: ``from freshcore._polled cimport PolledPage, polled_prepare, polled_value``.

cdef struct PolledPage:
    # what a scheduler keeps per page (polled_prepare fills it from Delta, lambda, nu, w)
    double dl       # Delta
    double lam      # lambda, nu, w as given (the extended-precision retry recomputes its weights from them)
    double nu
    double w
    double aw       # alpha w: an unmoved window's weight
    double b        # b(w): what a moved window adds (inf when nu = 0 < lambda Delta)
    double lw       # lambda Delta w
    double dw       # Delta w
    double q        # P(a window moves) = 1 - e^{-gamma w}
    double qb       # 1 - q
    double log_q
    double log_qb
    double r0       # e^{-(Delta + nu) w}: qb e^{-alpha w}
    double rho1     # q e^{-alpha w - b}/(1 - r0): the tilted weight ratio of one more moved window
    double one_m_edw  # 1 - e^{-Delta w}
    double p1       # 1 - r0 = 1 - e^{-(Delta + nu) w}: the tilted measure's success probability
    double lp1      # log(p1)
    double lr0      # log(r0) = -(Delta + nu) w
    double eaw      # e^{-alpha w}
    double wu       # r0/p1: an unmoved-last sub-column's W total over a moved-last one's
    double log_rho1
    double elr1     # an absolute error bound of log_rho1 in units of 2^-53
    int kind        # 0: lattice; 1: Greedy (lambda Delta = 0 or w = inf); 2: never changes (Delta = 0)

cdef void polled_prepare(PolledPage* pg, double dl, double lam, double nu, double w) noexcept nogil
cdef int polled_sums(const PolledPage* pg, double s, bint need_psi, double* psi, double* fresh,
                     double* value) noexcept nogil
cdef double polled_value(const PolledPage* pg, double s, double mu) noexcept nogil
cdef double polled_value_bounds(const PolledPage* pg, double s, double mu, double* lower) noexcept nogil
cdef double polled_level(const PolledPage* pg, double level, double mu) noexcept nogil
