"""Tiny colour clips (clean) and their perturb-made variants for a throwaway lmms-eval task."""
import json, os
import av, numpy as np
import perturb.video as pv
colours = {"red": (200, 30, 30), "green": (30, 200, 30), "blue": (30, 30, 200)}
letters = {"red": "A", "green": "B", "blue": "C"}
names = ["red", "green", "blue", "red", "green", "blue", "red", "blue"]
strength = [1.0, 1.0, 1.0, 0.6, 0.5, 0.45, 0.2, 0.7]
variants = {"clean": None, "gaussian_noise_1": ("gaussian_noise", 1), "gaussian_noise_3": ("gaussian_noise", 3),
            "saturate_1": ("saturate", 1), "saturate_2": ("saturate", 2)}
def write(path, frames):
    c = av.open(path, "w"); s = c.add_stream("mpeg4", rate=8); s.width = 32; s.height = 32; s.pix_fmt = "yuv420p"
    for f in frames:
        for p in s.encode(av.VideoFrame.from_ndarray(np.ascontiguousarray(f), format="rgb24")): c.mux(p)
    for p in s.encode(): c.mux(p)
    c.close()
docs = []
for i, name in enumerate(names):
    base = 115 + strength[i] * (np.array(colours[name], dtype=np.float64) - 115)
    clip = np.tile(base.astype(np.uint8), (4, 32, 32, 1))
    for folder, how in variants.items():
        os.makedirs(f"videos/{folder}", exist_ok=True)
        out = clip if how is None else pv.apply(clip, how[0], how[1], seed=i)
        write(f"videos/{folder}/clip{i}.mp4", out)
    docs.append({"video": f"clip{i}.mp4", "question": "Which colour dominates the clip?",
                 "options": ["A. red", "B. green", "C. blue", "D. none"], "answer": letters[name]})
for folder in variants:
    with open(f"{folder}.json", "w") as fh:
        json.dump([{**d, "video": os.path.abspath(f"videos/{folder}/{d['video']}")} for d in docs], fh)
