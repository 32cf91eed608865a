package io.mstar.model;

import io.mstar.graph.GraphEdge;
import io.mstar.graph.GraphNode;
import io.mstar.graph.GraphWalk;
import io.mstar.graph.ModelGraph;
import io.mstar.graph.SpecialDestinations;

import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * {@code minilm-embed}: the pretrained sentence encoder all-MiniLM-L6-v2 (a 6-layer BERT, hidden size 384) with its
 * real weights and WordPiece tokenizer. One sentence per request; the worker batches concurrent requests of
 * different lengths into one forward pass (padded to the longest, masked).
 *
 * <pre>
 * partition default
 *   walk embed: encode (group 0)
 *     encode(text)   text: uint8 UTF-8 bytes of one sentence, tokenized on the worker ([CLS] ... [SEP],
 *                    truncated at {@value #MAX_WORD_PIECES} word-pieces)
 *                    embedding  = L2-normalised mean (over the attention mask) of the last hidden states,
 *                                 float32 [{@value #EMBEDDING_DIM}]      -> emit_to_client (embedding)
 *                    num_tokens = word-pieces incl. [CLS]/[SEP], int32 [1] -> emit_to_client (usage)
 * </pre>
 *
 * <p>The conductor's policy runs {@code embed} once; nothing is persisted.
 */
public final class MiniLmModel {

    public static final String NAME = "minilm-embed";

    public static final String EMBED = "embed";
    public static final String ENCODE = "encode";

    public static final String TEXT = "text";
    public static final String EMBEDDING = "embedding";
    public static final String NUM_TOKENS = "num_tokens";

    public static final String TEXT_DTYPE = "uint8";
    public static final String EMBEDDING_DTYPE = "float32";
    public static final String NUM_TOKENS_DTYPE = "int32";
    public static final String EMBEDDING_MODALITY = "embedding";
    public static final String USAGE_MODALITY = "usage";

    /** Width of the sentence embedding. */
    public static final int EMBEDDING_DIM = 384;
    /** Word-pieces per sentence at most, [CLS] and [SEP] included; longer text is truncated. */
    public static final int MAX_WORD_PIECES = 256;

    private MiniLmModel() {
    }

    public static ModelGraph graph() {
        GraphNode encode = new GraphNode(ENCODE, Set.of(TEXT), List.of(
                GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, EMBEDDING).outputModality(EMBEDDING_MODALITY).build(),
                GraphEdge.builder(SpecialDestinations.EMIT_TO_CLIENT, NUM_TOKENS).outputModality(USAGE_MODALITY).build()),
                false);
        return new ModelGraph(NAME, List.of(new GraphWalk(EMBED, encode)),
                Map.of(ModelGraph.DEFAULT_PARTITION, List.of(EMBED)));
    }
}
