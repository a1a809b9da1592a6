"""Preference-alignment methods: DPO on on- / off-policy pairs, SimpleMix (Li & Khashabi, ICML 2025) and its
baselines HyPO and DPO-Mix-P, EPA (Hong et al., ICML 2025), SimPO and LOGO (Tang et al., ICML 2025), SFT."""
