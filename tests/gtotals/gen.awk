# awk -v n=ROWS -v regions=R -v seed=S -f gen.awk: rows of sales.csv (a header line first)
BEGIN {
    srand(seed); print "id,region,day,qty,price,disc"
    for (i = 1; i <= n; i++) {
        r = int(rand() * regions)
        d = 1 + int(rand() * 28)
        q = int(rand() * 200) - 50
        p = sprintf("%.2f", rand() * 2000 - 300)
        c = sprintf("%.2f", rand() * 0.1)
        printf "%d,r%05d,2020-02-%02d,%d,%s,%s\n", i, r, d, q, p, c
    }
}
