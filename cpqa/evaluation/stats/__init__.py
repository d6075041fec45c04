"""Statistics of the evaluation: ranking metrics, significance, classification, option shuffles, token pricing."""
