"""The MRC fabric controller (`mrc-ctl`): topology → static SRv6 plan → P4Runtime push."""
