#!/usr/bin/env python3
"""Beam search goldens from transformers 4.38.2's own generate(num_beams > 1), for the C beam search
alone (tests/models/test_beam_search.c).

The "model" is a table: the logits of a row are table[step, last token of the row % table rows],
step counting the tokens generated so far. The tables are seeded random numbers, with the eos logits raised
after a few tokens so hypotheses close in the middle; they are stored in the golden (never
re-generated in C), and generate() runs on them through a PreTrainedModel whose forward looks the
rows up and whose cache records every beam reordering (_reorder_cache's beam_idx).

Writes tests/models/golden/beam/:
  <case>_table.npy   float32 [max_length - prompt_len, min(vocab, 24), vocab]
  cases.json         per case: the generate() settings, the prompts, and HF's results: every
                     step's beam_idx and the rows the next step runs on, sequences,
                     sequences_scores

    /usr/bin/python3 tools/goldens/make_beam_golden.py      (torch 1.13, transformers 4.38.2)

Development time only: the test reads the committed files and needs no Python.
"""
import json
import os

import numpy as np
import torch
import transformers
from transformers.modeling_outputs import CausalLMOutputWithPast

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GOLDEN = os.path.join(ROOT, "tests", "models", "golden", "beam")


class TableConfig(transformers.PretrainedConfig):
    model_type = "vkf_table"


class TableModel(transformers.PreTrainedModel):
    """logits[row] = table[len(row) - prompt_len, row[-1] % table rows]; records the beam
    reorderings and the rows of every step."""
    config_class = TableConfig

    def __init__(self, config, table, prompt_len):
        super().__init__(config)
        self.table = torch.tensor(table)
        self.prompt_len = prompt_len
        self.reorders = []
        self.rows = []
        self.dummy = torch.nn.Parameter(torch.zeros(1))

    def prepare_inputs_for_generation(self, input_ids, **kwargs):
        return {"input_ids": input_ids}

    def forward(self, input_ids, past_key_values=None, return_dict=True, output_attentions=None,
                output_hidden_states=None):
        step = input_ids.shape[1] - self.prompt_len
        self.rows.append(input_ids.tolist())
        rows = self.table.shape[1]
        logits = self.table[step][input_ids[:, -1] % rows].unsqueeze(1).clone()
        past = ((torch.zeros(input_ids.shape[0], 1),),)
        return CausalLMOutputWithPast(logits=logits, past_key_values=past)

    def _reorder_cache(self, past_key_values, beam_idx):
        self.reorders.append(beam_idx.tolist())
        return past_key_values


def make_table(seed, steps, vocab, eos, boost_tokens, boost):
    rng = np.random.default_rng(seed)
    rows = min(vocab, 24)  # a wide vocabulary shares predecessor rows (token % rows): small files
    table = rng.standard_normal((steps, rows, vocab)).astype(np.float32) * 2.0
    for e in eos:
        for t in boost_tokens:
            table[2:, t, e] += boost  # after a couple of tokens these predecessors favour eos
    return table


CASES = [
    # name, seed, vocab, prompts, generate() settings, boost tokens, boost
    ("basic", 1, 24, [[3, 4, 5]], dict(num_beams=2, max_length=12, eos_token_id=2, pad_token_id=0),
     [7, 8, 9], 3.0),
    ("lp2_early_true", 2, 24, [[3, 4, 5]],
     dict(num_beams=3, max_length=14, eos_token_id=2, pad_token_id=0, length_penalty=2.0,
          early_stopping=True), [7, 8, 9, 10], 3.0),
    ("lp_neg_never", 3, 24, [[6, 11]],
     dict(num_beams=4, max_length=12, eos_token_id=2, pad_token_id=0, length_penalty=-0.5,
          early_stopping="never"), [7, 8, 9, 10], 3.5),
    ("lp07_never", 4, 24, [[6, 11, 12, 13]],
     dict(num_beams=4, max_length=13, eos_token_id=2, pad_token_id=0, length_penalty=0.7,
          early_stopping="never"), [7, 8, 9], 3.5),
    ("lp15_false", 5, 24, [[6, 11]],
     dict(num_beams=5, max_length=12, eos_token_id=2, pad_token_id=0, length_penalty=1.5,
          early_stopping=False), [7, 8, 9, 10, 14], 3.0),
    ("ngram_repetition", 6, 12, [[3, 4]],
     dict(num_beams=5, max_length=14, eos_token_id=2, pad_token_id=0, no_repeat_ngram_size=2,
          repetition_penalty=1.3), [7], 2.0),
    ("batch2_return2", 7, 24, [[3, 4, 7], [5, 6, 1]],
     dict(num_beams=3, max_length=12, eos_token_id=2, pad_token_id=0, num_return_sequences=2),
     [7, 8, 9], 3.0),
    ("batch2_early_pad", 8, 24, [[3, 4, 7], [5, 6, 1]],
     dict(num_beams=2, max_length=14, eos_token_id=2, pad_token_id=0, early_stopping=True),
     list(range(3, 24)), 3.0),
    ("forced_bos_eos", 9, 24, [[1]],
     dict(num_beams=3, max_length=9, eos_token_id=2, pad_token_id=0, forced_bos_token_id=5,
          forced_eos_token_id=2, min_length=4), [7, 8], 3.0),
    ("forced_wide_vocab", 10, 200, [[1], [4]],
     dict(num_beams=3, max_length=8, eos_token_id=2, pad_token_id=0, forced_bos_token_id=5,
          forced_eos_token_id=[2, 3]), [7, 8], 3.0),
    ("two_eos_min_new", 11, 24, [[3, 4, 5, 6]],
     dict(num_beams=2, max_length=14, eos_token_id=[2, 7], pad_token_id=0, min_new_tokens=3),
     [8, 9, 10], 3.0),
    ("no_eos", 12, 24, [[3, 4]], dict(num_beams=4, max_length=10, pad_token_id=0), [], 0.0),
]


def run_case(name, seed, vocab, prompts, settings, boost_tokens, boost):
    prompt_len = len(prompts[0])
    steps = settings["max_length"] - prompt_len
    eos = settings.get("eos_token_id")
    eos = [] if eos is None else (eos if isinstance(eos, list) else [eos])
    table = make_table(seed, steps, vocab, eos, boost_tokens, boost)
    model = TableModel(TableConfig(vocab_size=vocab), table, prompt_len).eval()
    model.generation_config = transformers.GenerationConfig()
    with torch.no_grad():
        out = model.generate(torch.tensor(prompts), do_sample=False, output_scores=True,
                             return_dict_in_generate=True, **settings)
    np.save(os.path.join(GOLDEN, name + "_table.npy"), table)
    # The last step's choice is not followed by a reordering (the loop ends): it is not recorded.
    case = dict(name=name, vocab=vocab, prompts=prompts, settings=settings,
                beam_rows=model.reorders, rows=model.rows[1:], sequences=out.sequences.tolist(),
                scores=[float(s) for s in out.sequences_scores.tolist()])
    finished_early = len(model.reorders) < steps
    print("%-18s %d steps of %d%s, lengths %s" % (
        name, len(model.reorders), steps, " (done early)" if finished_early else "",
        [len(s) for s in out.sequences.tolist()]))
    return case


def main():
    assert transformers.__version__ == "4.38.2", transformers.__version__
    os.makedirs(GOLDEN, exist_ok=True)
    cases = [run_case(*c) for c in CASES]
    with open(os.path.join(GOLDEN, "cases.json"), "w") as f:
        json.dump(cases, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
