"""Looking at the memory: a live 3D view in rerun (`rerun_log.RerunLogger`, extra ``viz``) and a static
top-down report (`report.write_report`: PNGs + HTML, matplotlib). Both import their library lazily."""
