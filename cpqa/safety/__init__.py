"""Stage 1, screening: empty / overlong / non-English input, personal details removed, urgent triage,
dosing and personal-decision referrals. Runs before anything leaves the machine."""
