"""The plugin's models, as lmms-eval reads them: {model name: class in models/<name>.py}."""
AVAILABLE_MODELS = {"colour_reader": "ColourReader"}
