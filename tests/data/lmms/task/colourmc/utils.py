def doc_to_visual(doc):
    return [doc["video"]]


def doc_to_text(doc, lmms_eval_specific_kwargs=None):
    return doc["question"] + "\n" + "\n".join(doc["options"]) + "\nAnswer with the option's letter."


def process_results(doc, results):
    pred = results[0].strip()[:1].upper()
    return {"accuracy": 1.0 if pred == doc["answer"] else 0.0}
