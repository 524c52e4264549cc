# estimators.py: HogwildClassifier, HogwildRegressor and their factorisation machines, HogwildFMClassifier and HogwildFMRegressor: scikit-learn estimators over the library's HOGWILD! trainer.
# SPDX-License-Identifier: BSD-2-Clause
"""scikit-learn estimators that train with hogtrain.

All take NumPy arrays, SciPy sparse matrices (CSR used in place when its
values are float32 and its indices int32; see hogtrain._data) or the path
of a data file (libsvm, CSV, Vowpal Wabbit or LIBFFM text, or a binary .hgd
dataset, larger than memory if need be; its labels are in the file, so y is
None). Training runs in the library with the GIL released.

The parameters are the library's (hog_train_params), under the same names
as the hogtrain command's flags, so that a model trained here and one
trained by `hogtrain train` with the same data, options and seed are the
same model: fit_intercept is --bias, n_jobs --threads, random_state --seed.
"""

import os
import tempfile

import numpy as np
from scipy.special import expit, softmax
from sklearn.base import BaseEstimator, ClassifierMixin, RegressorMixin
from sklearn.metrics import r2_score
from sklearn.utils.metaestimators import available_if
from sklearn.utils.multiclass import check_classification_targets
from sklearn.utils.validation import _check_sample_weight, check_is_fitted, check_random_state

from ._data import Dataset, column_fields, from_arrays, is_path, open_path, read_params
from ._ffi import HogtrainValueError, check, ffi, lib, new_err

# Rows in one of the trainer's segments (SEGMENT_ROWS, src/train/train_run.h).
_SEGMENT_ROWS = 1024

# The library's parameter fields that go by another name here.
_FIELD_NAMES = {"bias": "fit_intercept", "threads": "n_jobs", "seed": "random_state", "factors": "n_factors"}


def _enum(parse, kind, name, value):
    out = ffi.new(kind + " *")
    if not isinstance(value, str) or parse(value.encode(), out) < 0:
        raise ValueError("%s=%r is not one the library knows" % (name, value))
    return out[0]


def _bind(bind):
    """hog_train_params.bind of the estimators' bind: True (pin the workers
    to cores), False (leave them to the OS) or 'auto' (pin them when they
    take every core the process may use: fits side by side, as a search's
    n_jobs runs them, are then not pinned to the same first cores)."""
    if isinstance(bind, str):
        if bind != "auto":
            raise ValueError("bind=%r: expected True, False or 'auto'" % (bind,))
        return lib.HOG_BIND_AUTO
    if isinstance(bind, (bool, np.bool_, int, np.integer)) and int(bind) in (0, 1):
        return int(bind)
    raise ValueError("bind=%r: expected True, False or 'auto'" % (bind,))


def _threads(n_jobs):
    if n_jobs is None or n_jobs == -1:
        return 0
    if not isinstance(n_jobs, (int, np.integer)) or n_jobs < 1:
        raise ValueError("n_jobs=%r: expected None, -1 or a positive number of threads" % (n_jobs,))
    return int(n_jobs)


def _seed(random_state):
    """None is the library's seed (1): a run is reproducible unless asked otherwise."""
    if random_state is None:
        return 1
    if isinstance(random_state, (int, np.integer)):
        if random_state < 0:
            raise ValueError("random_state=%r: expected a seed of 0 or more" % (random_state,))
        return int(random_state)
    return int(check_random_state(random_state).randint(2**31 - 1))


def _name(fn, value):
    """A setting's name, as the library's hog_*_name gives it."""
    return ffi.string(fn(value)).decode()


def _gc_model(ptr):
    return ffi.gc(ptr, lib.hog_model_free)


class _Hogwild(BaseEstimator):
    """What the classifiers and the regressors share: the parameters, training
    from a data set (from zeros or from the fitted weights), the model as
    coef_ and intercept_, and margins predicted by the library. A
    factorisation machine (_FactorisationMachine) replaces the parts that
    are a linear model's: its parameters (_kind_params), its model (_take,
    _model), and its data's fields (_set_fields, _dataset, _open)."""

    def __init__(self, *, loss, epochs=20, step=2.0, decay=0.8, schedule="decay", power=0.5, l2=1e-6, l1=0.0,
                 fit_intercept=True, normalized=True, average=0, early_stop=0, holdout=0.0, kernel="auto",
                 batch=32, replicas="machine", n_jobs=None, bind="auto", random_state=None, mem_limit=0):
        self.loss = loss
        self.epochs = epochs
        self.step = step
        self.decay = decay
        self.schedule = schedule
        self.power = power
        self.l2 = l2
        self.l1 = l1
        self.fit_intercept = fit_intercept
        self.normalized = normalized
        self.average = average
        self.early_stop = early_stop
        self.holdout = holdout
        self.kernel = kernel
        self.batch = batch
        self.replicas = replicas
        self.n_jobs = n_jobs
        self.bind = bind
        self.random_state = random_state
        self.mem_limit = mem_limit

    # ---- parameters -----------------------------------------------------
    def _train_params(self, hog_loss, partial_epoch=None):
        """hog_train_params of this estimator for a run of hog_loss (a
        library loss name); partial_epoch: one epoch of partial_fit, the
        k-th, with the step that epoch of a fit starts with."""
        p = ffi.new("hog_train_params *", lib.hog_train_params_default())
        p.loss = _enum(lib.hog_loss_parse, "hog_loss", "loss", hog_loss)
        p.schedule = _enum(lib.hog_schedule_parse, "hog_schedule", "schedule", self.schedule)
        p.replicas = _enum(lib.hog_replicas_parse, "hog_replicas", "replicas", self.replicas)
        try:
            p.epochs = self.epochs
            p.step = self._step()
            p.decay = self.decay
            p.power = self.power
            p.l1 = self.l1
            p.bias = bool(self.fit_intercept)
            p.normalized = bool(self.normalized)
            p.average = self.average
            p.early_stop = self.early_stop
            p.holdout = self.holdout
            p.bind = _bind(self.bind)
            p.mem_limit = self.mem_limit
            p.quantile = getattr(self, "quantile", 0.5)
            self._kind_params(p)
        except (TypeError, OverflowError) as e:
            raise ValueError("%s: %s" % (type(self).__name__, e)) from None
        p.threads = _threads(self.n_jobs)
        p.seed = _seed(self.random_state)
        if partial_epoch is not None:
            p.epochs = 1
            p.average = min(p.average, 1)
            p.early_stop = 0
            if p.schedule == lib.HOG_SCHEDULE_DECAY:
                p.step = self._step() * self.decay**partial_epoch
            elif p.schedule == lib.HOG_SCHEDULE_INVSCALING:
                p.step = self._step() / (1.0 + partial_epoch) ** self.power
        field = ffi.new("const char **")
        if lib.hog_train_params_check(p, field) < 0:
            name = ffi.string(field[0]).decode()
            raise ValueError("%s: invalid parameter %s (hog_train_params.%s)" % (
                type(self).__name__, _FIELD_NAMES.get(name, name), name))
        return p

    def _step(self):
        """The initial step: step, as given."""
        return self.step

    def _kind_params(self, p):
        """The parameters of a linear model: its penalty and its kernel."""
        p.kernel = _enum(lib.hog_kernel_parse, "hog_kernel", "kernel", self.kernel)
        p.l2 = self.l2
        p.batch = self.batch

    # ---- data -----------------------------------------------------------
    def _set_fields(self, X, fields, reset):
        """Checks and keeps the fields of X's columns (a factorisation
        machine's); a linear model takes none."""

    def _path_fields(self, fields, reset):
        """A fit on a file: its fields, if any, are the file's."""

    def _read_params(self):
        """How a file is read for training (NULL: the library's defaults)."""
        return ffi.NULL

    def _open(self, path):
        """A data file, read as the model's training data was."""
        return open_path(path, getattr(self, "_index_base", -1))

    def _dataset(self, X, labels=None, weights=None):
        """A data set of validated arrays."""
        return from_arrays(X, labels, weights)

    # ---- training -------------------------------------------------------
    def _run(self, hog_loss, data, init=None, partial_epoch=None):
        """Trains on data (a Dataset, or a path trained by
        hog_trainer_run_file) and returns the model."""
        p = self._train_params(hog_loss, partial_epoch)
        if isinstance(data, Dataset) and data.rows <= _SEGMENT_ROWS:
            # The workers share an epoch out in segments of 1,024 rows: with
            # one segment there is nothing to share, and on one thread the
            # run is reproducible (the normalised update keeps per-worker
            # sums, which would follow whichever worker took the segment).
            p.threads = 1
        err = new_err()
        t = ffi.new("hog_trainer **")
        check(lib.hog_trainer_create(p, t, err, len(err)), err)
        trainer = ffi.gc(t[0], lib.hog_trainer_free)
        if init is not None:
            check(lib.hog_trainer_set_init(trainer, init))
        out = ffi.new("hog_model **")
        if isinstance(data, Dataset):
            check(lib.hog_trainer_run(trainer, data.ptr, ffi.NULL, out, err, len(err)), err)
        else:
            run = ffi.new("hog_file_run *")
            check(lib.hog_trainer_run_file(trainer, os.fsencode(data), self._read_params(), ffi.NULL, ffi.NULL, out,
                                           run, err, len(err)), err)
            lib.hog_dataset_close(run.train)
        return _gc_model(out[0])

    def _take(self, model, label_values):
        """Sets coef_, intercept_ and what else fit sets from a trained model."""
        w = ffi.new("hog_weights *")
        lib.hog_model_weights(model, w)
        n, k = int(w.features), int(w.outputs)
        weights = np.frombuffer(ffi.buffer(w.w, n * k * 4), dtype=np.float32).reshape(n, k)
        intercept = np.frombuffer(ffi.buffer(w.bias, k * 4), dtype=np.float32)
        if not (np.all(np.isfinite(weights)) and np.all(np.isfinite(intercept))):
            raise ValueError("%s: the training diverged (its weights are not finite): lower step, scale X "
                             "(StandardScaler), or set normalized=True" % type(self).__name__)
        self.coef_ = weights.T.astype(np.float64)
        self.intercept_ = intercept.astype(np.float64)
        self._take_info(model, n, label_values)

    def _take_info(self, model, n, label_values):
        """Sets what fit sets of a trained model of n features but its weights."""
        info = ffi.new("hog_model_info *")
        lib.hog_model_get_info(model, info)
        self.n_iter_ = int(info.epochs_run)
        self.train_seconds_ = float(info.seconds)
        self._hog_loss = _name(lib.hog_loss_name, info.loss)
        self._label_values = label_values
        names = _feature_names(model, n)
        if names is not None:
            self.feature_names_ = names
        elif hasattr(self, "feature_names_"):  # a fit on arrays after one on a file of names
            del self.feature_names_

    def _model(self):
        """The fitted coef_ and intercept_ as a model of the library's."""
        coef = np.ascontiguousarray(np.asarray(self.coef_, dtype=np.float32).T)
        intercept = np.ascontiguousarray(self.intercept_, dtype=np.float32)
        labels = self._label_values
        out = ffi.new("hog_model **")
        err = new_err()
        lab = ffi.from_buffer("double[]", labels) if labels is not None else ffi.NULL
        check(lib.hog_model_from_weights(_enum(lib.hog_loss_parse, "hog_loss", "loss", self._hog_loss),
                                         coef.shape[0], 0 if labels is None else len(labels), lab,
                                         ffi.from_buffer("float[]", coef), ffi.from_buffer("float[]", intercept),
                                         out, err, len(err)), err)
        return _gc_model(out[0])

    def _data(self, X, reset):
        """X as a Dataset for prediction (labels 0), checked as scikit-learn checks it."""
        if is_path(X):
            return self._open(X)
        X = self._validate_data(X, accept_sparse="csr", dtype=[np.float32], order="C", reset=reset)
        return self._dataset(X)

    def _margins(self, data):
        """The raw scores of every row of data: (rows, outputs) float32."""
        model = self._model()
        info = ffi.new("hog_model_info *")
        lib.hog_model_get_info(model, info)
        out = np.empty((data.rows, int(info.outputs)), dtype=np.float32)
        err = new_err()
        check(lib.hog_model_predict_array(model, data.ptr, lib.HOG_PREDICT_MARGINS, _threads(self.n_jobs),
                                          ffi.from_buffer("float[]", out, require_writable=True), out.size, err,
                                          len(err)), err)
        return out

    def _fit_arrays(self, X, y, sample_weight, reset):
        if y is None:
            raise ValueError("%s requires y to be passed, but the target y is None" % type(self).__name__)
        X, y = self._validate_data(X, y, accept_sparse="csr", dtype=[np.float32], order="C", reset=reset,
                                   multi_output=False, y_numeric=isinstance(self, RegressorMixin))
        weights = None
        if sample_weight is not None:
            weights = _check_sample_weight(sample_weight, X, dtype=np.float32)
            if np.all(weights == 1):
                weights = None  # the same run as without
        return X, y, weights

    def save(self, path):
        """Writes the fitted model as a hogtrain model file (what `hogtrain
        train -o` writes; `hogtrain predict` and hogtrain.load read it).
        Classes that are strings are written as their numbers 0..K-1 in
        classes_' order: the file does not keep the names."""
        check_is_fitted(self)
        check(lib.hog_model_save(self._model(), os.fsencode(path)))


def _class_values(classes):
    """The label values the library trains on for these classes: the
    classes themselves when they are integers a float32 holds exactly
    (so a model file says the same labels as the command's), else
    0..K-1."""
    if classes.dtype.kind in "iub" or (classes.dtype.kind == "f" and np.all(np.floor(classes) == classes)):
        values = classes.astype(np.float64)
        if np.all(np.abs(values) < 2**24):
            return values
    return np.arange(len(classes), dtype=np.float64)


def _model_classes(model, values):
    """classes_ of a trained or loaded model whose label values are
    values: its class names when its training labels were strings (a CSV
    column of them; the values are then 0..K-1, the names sorted as
    np.unique sorts str), else the values, as integers when they are."""
    names = [lib.hog_model_class_name(model, k) for k in range(len(values))]
    if names and all(n != ffi.NULL for n in names):
        return np.array([ffi.string(n).decode("utf-8", "surrogateescape") for n in names])
    return values.astype(np.int64) if np.all(np.floor(values) == values) else values


def _feature_names(model, n):
    """feature_names_ of a model whose training text named its features
    (a CSV header, Vowpal Wabbit text read with feature_names): an object
    array of n, each feature's name or None; None when it has no names."""
    named = int(lib.hog_model_named_features(model))
    if not named:
        return None
    names = np.full(n, None, dtype=object)
    for k in range(named):
        f = int(lib.hog_model_named_feature(model, k))
        names[f] = ffi.string(lib.hog_model_feature_name(model, f)).decode("utf-8", "surrogateescape")
    return names


# Why check_sample_weights_invariance(kind=zeros) fails, for every estimator.
_ZERO_WEIGHTS = ("SGD visits the rows in an order shuffled by block and segment: removing rows shifts the others' "
                 "places in that order, so a row of weight 0 is not the same as no row (the predictions differ "
                 "by about 1e-6, as SGDClassifier's do)")


class _Classifier(ClassifierMixin, _Hogwild):
    """What the linear classifier and the factorisation machine share: the
    classes, training on arrays or a file (from zeros or from the fitted
    model), and the predictions."""

    _softmax = True  # more than two classes train a softmax model

    def _library_loss(self, n_classes):
        if self.loss not in ("logistic", "hinge", "modified_huber"):
            raise ValueError("loss=%r: expected 'logistic', 'hinge' or 'modified_huber'" % (self.loss,))
        if n_classes > 2:
            if not self._softmax:
                raise ValueError("%s is binary, and y has %d classes: wrap it in "
                                 "sklearn.multiclass.OneVsRestClassifier" % (type(self).__name__, n_classes))
            if self.loss != "logistic":
                raise ValueError("loss=%r is binary, and y has %d classes: use loss='logistic' (softmax)" % (
                    self.loss, n_classes))
            return "softmax"
        return self.loss

    def _set_classes(self, classes):
        classes = np.unique(classes)
        if len(classes) < 2:
            raise ValueError("%s needs samples of at least 2 classes in the data, but the data contains only "
                             "one class: %r" % (type(self).__name__, classes[0] if len(classes) else None))
        self.classes_ = classes
        return _class_values(classes)

    def _encode(self, y, values):
        """y's classes as the label values the library trains on."""
        idx = np.searchsorted(self.classes_, y)
        idx[idx == len(self.classes_)] = 0
        unknown = self.classes_[idx] != y
        if np.any(unknown):
            raise ValueError("y holds %r, which is not one of the classes %r" % (y[unknown][0], self.classes_))
        return values[idx].astype(np.float32)

    def _fit_path(self, path, y, sample_weight, init=None, partial_epoch=None):
        if y is not None or sample_weight is not None:
            raise ValueError("a file holds its own labels: y and sample_weight must be None with a path")
        if init is None:
            # The file is read once, as it trains: its labels are known only
            # then. More than two turn a logistic run into a softmax one,
            # trained again (a pipe cannot be read again: its error stands).
            try:
                model = self._run(self._library_loss(2), path)
            except HogtrainValueError as e:
                if not (e.code == lib.HOG_ELABEL and "exactly two label values" in str(e) and
                        self.loss == "logistic" and self._softmax and os.path.isfile(path)):
                    raise
                model = self._run("softmax", path)
        else:
            with self._open(path) as d:
                model = self._run(self._hog_loss, d, init, partial_epoch)
        info = ffi.new("hog_model_info *")
        lib.hog_model_get_info(model, info)
        w = ffi.new("hog_weights *")
        lib.hog_model_weights(model, w)
        values = np.frombuffer(ffi.buffer(w.class_labels, 8 * int(w.classes)), dtype=np.float64).copy()
        self.classes_ = _model_classes(model, values)
        self.n_features_in_ = int(w.features)
        self._index_base = int(info.data_index_base)
        self._take(model, values)
        return self

    def _fit(self, X, y, sample_weight, fields=None):
        """fit, with the fields of X's columns (a factorisation machine's)."""
        if is_path(X):
            self._path_fields(fields, reset=True)
            self.epochs_done_ = 0
            self._fit_path(X, y, sample_weight)
            self.epochs_done_ = self.n_iter_
            return self
        X, y, weights = self._fit_arrays(X, y, sample_weight, reset=True)
        check_classification_targets(y)
        self._set_fields(X, fields, reset=True)
        values = self._set_classes(y)
        hog_loss = self._library_loss(len(self.classes_))
        with self._dataset(X, self._encode(y, values), weights) as d:
            model = self._run(hog_loss, d)
        self._index_base = -1
        self._take(model, values)
        self.epochs_done_ = self.n_iter_
        return self

    def _partial_fit(self, X, y, classes, sample_weight, fields=None):
        """partial_fit, with the fields of X's columns (a factorisation machine's)."""
        first = not hasattr(self, "classes_")
        if first and is_path(X):
            return self._fit(X, None, None, fields)
        if is_path(X):
            self._path_fields(fields, reset=False)
            model = self._model()
            self._fit_path(X, y, sample_weight, model, self.epochs_done_)
            self.epochs_done_ += 1
            return self
        if first and classes is None:
            raise ValueError("classes must be passed on the first call to partial_fit")
        X, y, weights = self._fit_arrays(X, y, sample_weight, reset=first)
        check_classification_targets(y)
        self._set_fields(X, fields, reset=first)
        if first:
            values = self._set_classes(classes)
            init = None
            self.epochs_done_ = 0
            self._index_base = -1
        else:
            if classes is not None and not np.array_equal(np.unique(classes), self.classes_):
                raise ValueError("classes=%r is not %r, the classes of the first call to partial_fit" % (
                    classes, self.classes_))
            values = self._label_values
            init = self._model()
        hog_loss = self._library_loss(len(self.classes_))
        with self._dataset(X, self._encode(y, values), weights) as d:
            model = self._run(hog_loss, d, init, self.epochs_done_)
        self._take(model, values)
        self.epochs_done_ += 1
        return self

    def decision_function(self, X):
        """Margins: (n_samples,) for two classes (positive: classes_[1]), else
        (n_samples, n_classes)."""
        check_is_fitted(self)
        with self._data(X, reset=False) as d:
            m = self._margins(d).astype(np.float64)
        return m.ravel() if m.shape[1] == 1 else m

    def predict(self, X):
        d = self.decision_function(X)
        return self.classes_[(d > 0).astype(int) if d.ndim == 1 else np.argmax(d, axis=1)]

    def _has_proba(self):
        return self.loss in ("logistic", "modified_huber")

    @available_if(_has_proba)
    def predict_proba(self, X):
        """Class probabilities, (n_samples, n_classes): the logistic or
        softmax probability, or modified_huber's (clip(margin, -1, 1) + 1) / 2."""
        d = self.decision_function(X)
        if d.ndim == 2:
            return softmax(d, axis=1)
        p = expit(d) if self.loss == "logistic" else (np.clip(d, -1, 1) + 1) / 2
        return np.column_stack([1 - p, p])

    @available_if(_has_proba)
    def predict_log_proba(self, X):
        with np.errstate(divide="ignore"):
            return np.log(self.predict_proba(X))

    def score(self, X, y=None, sample_weight=None):
        """Accuracy on X and y, or on the rows and labels of a data file."""
        if not is_path(X):
            return super().score(X, y, sample_weight)
        check_is_fitted(self)
        if self.classes_.dtype.kind in "OUS":
            # the file's labels are its names' numbers in the file's own
            # order, which the library does not hand back
            raise ValueError("score(path): the classes are names (%r, ...); score the file's rows as arrays, "
                             "score(X, y), or run `hogtrain predict MODEL FILE --report`" % (self.classes_[0],))
        with self._open(X) as d:
            labels = d.labels()
            m = self._margins(d)
        pred = self._label_values[(m[:, 0] > 0).astype(int) if m.shape[1] == 1 else np.argmax(m, axis=1)]
        if m.shape[1] == 1:  # binary: above the midpoint of the two labels is positive
            truth = self._label_values[(labels > self._label_values.mean()).astype(int)]
        else:
            truth = labels
        return float(np.mean(pred == truth))

    def _more_tags(self):
        return {"_xfail_checks": {"check_sample_weights_invariance": _ZERO_WEIGHTS}}


class HogwildClassifier(_Classifier):
    """A linear classifier trained with HOGWILD! SGD on every core.

    loss: 'logistic' (binary logistic regression; with more than two
    classes, multinomial softmax regression), 'hinge' (linear SVM) or
    'modified_huber' (both binary only). The other parameters are the
    library's (hog_train_params) and the hogtrain command's flags:

    epochs, step, decay, schedule ('decay', 'invscaling', 'constant',
    'adagrad'), power, l2, l1, fit_intercept (--bias), normalized, average,
    early_stop and holdout, kernel ('auto', 'sparse', 'dense'), batch,
    replicas ('machine', 'node', 'core'), n_jobs (worker threads: None or
    -1 for every core), bind (pin workers to cores: True, False, or 'auto',
    the default: when they take every core), random_state (the seed;
    None is the library's 1), mem_limit (bytes; 0: half of what is free).

    partial_fit trains one epoch on the batch from the current weights, with
    the step the same epoch of a fit would take (decay and invscaling
    schedules); AdaGrad's sums start afresh on each call.

    Fitted: classes_, coef_ (n_classes or 1, n_features), intercept_,
    n_features_in_, n_iter_ (epochs run), epochs_done_ (all fits' and
    partial_fits' epochs), train_seconds_ (the library's training time of
    the last fit, evaluation excluded); feature_names_ (an object array of
    n_features, each feature's name or None) when fitted on, or loaded
    from a model trained on, a file that named its features (a CSV header;
    coef_[k][j] is the weight of feature_names_[j]). save() keeps the
    weights, not the names.
    """

    def __init__(self, *, loss="logistic", epochs=20, step=2.0, decay=0.8, schedule="decay", power=0.5, l2=1e-6,
                 l1=0.0, fit_intercept=True, normalized=True, average=0, early_stop=0, holdout=0.0, kernel="auto",
                 batch=32, replicas="machine", n_jobs=None, bind="auto", random_state=None, mem_limit=0):
        super().__init__(loss=loss, epochs=epochs, step=step, decay=decay, schedule=schedule, power=power, l2=l2,
                         l1=l1, fit_intercept=fit_intercept, normalized=normalized, average=average,
                         early_stop=early_stop, holdout=holdout, kernel=kernel, batch=batch, replicas=replicas,
                         n_jobs=n_jobs, bind=bind, random_state=random_state, mem_limit=mem_limit)

    def fit(self, X, y=None, sample_weight=None):
        """Trains a new model on X (array, sparse matrix or data file path)
        and y (None for a path). Returns self."""
        return self._fit(X, y, sample_weight)

    def partial_fit(self, X, y=None, classes=None, sample_weight=None):
        """Trains one epoch on this batch, from the current weights (from
        zeros on the first call, which must name every class in classes).
        Returns self."""
        return self._partial_fit(X, y, classes, sample_weight)


class _Regressor(RegressorMixin, _Hogwild):
    """What the linear regression and the factorisation machine share:
    training on arrays or a file (from zeros or from the fitted model), and
    the predictions."""

    def _library_loss(self):
        if self.loss not in ("squared", "quantile"):
            raise ValueError("loss=%r: expected 'squared' or 'quantile'" % (self.loss,))
        return self.loss

    def _fit_path(self, path, y, sample_weight, init=None, partial_epoch=None):
        if y is not None or sample_weight is not None:
            raise ValueError("a file holds its own labels: y and sample_weight must be None with a path")
        if init is None:
            model = self._run(self._library_loss(), path)
        else:
            with self._open(path) as d:
                model = self._run(self._library_loss(), d, init, partial_epoch)
        info = ffi.new("hog_model_info *")
        lib.hog_model_get_info(model, info)
        self.n_features_in_ = int(info.features)
        self._index_base = int(info.data_index_base)
        self._take(model, None)
        return self

    def _fit(self, X, y, sample_weight, fields=None):
        """fit, with the fields of X's columns (a factorisation machine's)."""
        if is_path(X):
            self._path_fields(fields, reset=True)
            self._fit_path(X, y, sample_weight)
            self.epochs_done_ = self.n_iter_
            return self
        X, y, weights = self._fit_arrays(X, y, sample_weight, reset=True)
        self._set_fields(X, fields, reset=True)
        with self._dataset(X, np.asarray(y, dtype=np.float32), weights) as d:
            model = self._run(self._library_loss(), d)
        self._index_base = -1
        self._take(model, None)
        self.epochs_done_ = self.n_iter_
        return self

    def _partial_fit(self, X, y, sample_weight, fields=None):
        """partial_fit, with the fields of X's columns (a factorisation machine's)."""
        first = not hasattr(self, "n_iter_")
        if first and is_path(X):
            return self._fit(X, None, None, fields)
        if is_path(X):
            self._path_fields(fields, reset=False)
            self._fit_path(X, y, sample_weight, self._model(), self.epochs_done_)
            self.epochs_done_ += 1
            return self
        X, y, weights = self._fit_arrays(X, y, sample_weight, reset=first)
        self._set_fields(X, fields, reset=first)
        if first:
            self.epochs_done_ = 0
            self._index_base = -1
        init = None if first else self._model()
        with self._dataset(X, np.asarray(y, dtype=np.float32), weights) as d:
            model = self._run(self._library_loss(), d, init, self.epochs_done_)
        self._take(model, None)
        self.epochs_done_ += 1
        return self

    def predict(self, X):
        check_is_fitted(self)
        with self._data(X, reset=False) as d:
            return self._margins(d)[:, 0].astype(np.float64)

    def _more_tags(self):
        return {"_xfail_checks": {"check_sample_weights_invariance": _ZERO_WEIGHTS}}

    def score(self, X, y=None, sample_weight=None):
        """R^2 on X and y, or on the rows and labels of a data file."""
        if not is_path(X):
            return super().score(X, y, sample_weight)
        check_is_fitted(self)
        with self._open(X) as d:
            return float(r2_score(d.labels(), self._margins(d)[:, 0]))


class HogwildRegressor(_Regressor):
    """A linear regression trained with HOGWILD! SGD on every core.

    loss: 'squared' (least squares) or 'quantile' (the pinball loss at
    quantile, in (0, 1)). The other parameters are HogwildClassifier's,
    with one default of its own: normalized=True (`hogtrain train
    --normalized`), scale-invariant steps, since a squared loss diverges at
    a fixed step on features of large range (pass normalized=False for the
    command's default).
    """

    def __init__(self, *, loss="squared", quantile=0.5, epochs=20, step=2.0, decay=0.8, schedule="decay", power=0.5,
                 l2=1e-6, l1=0.0, fit_intercept=True, normalized=True, average=0, early_stop=0, holdout=0.0,
                 kernel="auto", batch=32, replicas="machine", n_jobs=None, bind="auto", random_state=None,
                 mem_limit=0):
        super().__init__(loss=loss, epochs=epochs, step=step, decay=decay, schedule=schedule, power=power, l2=l2,
                         l1=l1, fit_intercept=fit_intercept, normalized=normalized, average=average,
                         early_stop=early_stop, holdout=holdout, kernel=kernel, batch=batch, replicas=replicas,
                         n_jobs=n_jobs, bind=bind, random_state=random_state, mem_limit=mem_limit)
        self.quantile = quantile

    def fit(self, X, y=None, sample_weight=None):
        """Trains a new model on X (array, sparse matrix or data file path)
        and y (None for a path). Returns self."""
        return self._fit(X, y, sample_weight)

    def partial_fit(self, X, y=None, sample_weight=None):
        """Trains one epoch on this batch, from the current weights (from
        zeros on the first call). Returns self."""
        return self._partial_fit(X, y, sample_weight)


# ===================================================================== #
#  Factorisation machines
# ===================================================================== #

def _model_bytes(model):
    """A model's file (hog_model_save's bytes), for pickling."""
    with tempfile.TemporaryDirectory(prefix="hogtrain-") as folder:
        path = os.path.join(folder, "model.hog")
        check(lib.hog_model_save(model, os.fsencode(path)))
        with open(path, "rb") as f:
            return f.read()


def _model_of_bytes(data):
    """The model of a file's bytes (_model_bytes)."""
    with tempfile.TemporaryDirectory(prefix="hogtrain-") as folder:
        path = os.path.join(folder, "model.hog")
        with open(path, "wb") as f:
            f.write(data)
        out = ffi.new("hog_model **")
        err = new_err()
        check(lib.hog_model_load(os.fsencode(path), out, err, len(err)), err)
        return _gc_model(out[0])


# Why check_fit2d_1sample fails for the regressor: the check wants a
# refusal that names the one sample, or a model.
_ONE_ROW = ("one dense row of 10 values up to 3, trained 20 epochs, diverges at AdaGrad's default step: its "
            "first steps move every weight and factor by 0.2 at once, and the pairs' sum, quadratic in the "
            "factors, overshoots and grows; the library stops it (HOG_EDIVERGED, a ValueError that says to lower "
            "step, not that there is one sample). The classifier refuses one row as one class")


class _FactorisationMachine:
    """The parts of an estimator that make it a factorisation machine: its
    parameters, its model (kept whole: the library has no model of given
    factors, and a pickle holds its file), and the fields of X's columns,
    which a field-aware one pairs features by."""

    _softmax = False  # the library's machines are binary or regressions

    def __init__(self, *, loss, n_factors, field_aware, factor_init, epochs, step, decay, schedule, power, l2,
                 l2_rows, l1, fit_intercept, normalized, average, early_stop, holdout, replicas, n_jobs, bind,
                 random_state, mem_limit):
        self.loss = loss
        self.n_factors = n_factors
        self.field_aware = field_aware
        self.factor_init = factor_init
        self.epochs = epochs
        self.step = step
        self.decay = decay
        self.schedule = schedule
        self.power = power
        self.l2 = l2
        self.l2_rows = l2_rows
        self.l1 = l1
        self.fit_intercept = fit_intercept
        self.normalized = normalized
        self.average = average
        self.early_stop = early_stop
        self.holdout = holdout
        self.replicas = replicas
        self.n_jobs = n_jobs
        self.bind = bind
        self.random_state = random_state
        self.mem_limit = mem_limit

    # ---- parameters -----------------------------------------------------
    def _step(self):
        """The initial step: step, or the command's default (`--model fm`:
        0.2; `--model ffm`: 0.3)."""
        if self.step is None:
            return 0.3 if self.field_aware else 0.2
        return self.step

    def _kind_params(self, p):
        """The machine's parameters: its factors, and its penalty, by default
        the command's (`hogtrain train --model fm`: --l2 1e-4; `--model
        ffm`: --l2 1/rows)."""
        n = self.n_factors
        if isinstance(n, bool) or not isinstance(n, (int, np.integer)) or not 1 <= n <= lib.HOG_MAX_FACTORS:
            raise ValueError("n_factors=%r: expected a whole number from 1 to %d" % (n, lib.HOG_MAX_FACTORS))
        p.factors = int(n)
        p.field_aware = bool(self.field_aware)
        p.factor_init = self.factor_init
        if self.l2 is not None and self.l2_rows is not None:
            raise ValueError("l2=%r and l2_rows=%r: give a fixed penalty or one over the rows, not both" % (
                self.l2, self.l2_rows))
        if self.l2 is not None:
            p.l2 = self.l2
        elif self.l2_rows is not None:
            p.l2_rows = self.l2_rows
        elif self.field_aware:
            p.l2_rows = 1.0
        else:
            p.l2 = 1e-4

    # ---- fields ---------------------------------------------------------
    def _set_fields(self, X, fields, reset):
        if fields is not None:
            fields = column_fields(fields, X.shape[1])
            if not reset and self.fields_ is not None and not np.array_equal(fields, self.fields_):
                raise ValueError("fields are not those of the first fit: each column keeps its field")
            self.fields_ = fields
        elif reset:
            self.fields_ = None
        if self.field_aware and self.fields_ is None:
            raise ValueError("%s(field_aware=True) pairs features by their fields: pass one field id for each "
                             "column of X, fit(X, y, fields=...), or fit a data file that has fields (LIBFFM "
                             "text, Vowpal Wabbit namespaces, CSV columns)" % type(self).__name__)

    def _path_fields(self, fields, reset):
        if fields is not None:
            raise ValueError("a data file holds its own fields: fields must be None with a path")
        if reset:
            self.fields_ = None

    def _read_params(self):
        return read_params(-1, fields=bool(self.field_aware))

    def _open(self, path):
        return open_path(path, getattr(self, "_index_base", -1), fields=bool(self.field_aware))

    def _dataset(self, X, labels=None, weights=None):
        fields = None
        if self.field_aware:
            fields = self.fields_
            if fields is None:  # trained on a file
                raise ValueError("%s was fitted on a data file's fields, and X's columns have none: predict data "
                                 "files with fields, or fit on X with fields=" % type(self).__name__)
        return from_arrays(X, labels, weights, fields)

    # ---- the model ------------------------------------------------------
    def _take(self, model, label_values):
        w = ffi.new("hog_weights *")
        lib.hog_model_weights(model, w)
        n, k = int(w.features), int(w.outputs)
        weights = np.frombuffer(ffi.buffer(w.w, n * k * 4), dtype=np.float32)
        bias = float(w.bias[0])
        if not (np.isfinite(bias) and np.all(np.isfinite(weights))):
            raise ValueError("%s: the training diverged (its weights are not finite): lower step or factor_init, "
                             "raise l2, or scale X (StandardScaler)" % type(self).__name__)
        self._fm = model
        self.intercept_ = np.array([bias])
        self.n_fields_ = int(lib.hog_model_fields(model))
        self._take_info(model, n, label_values)

    def _model(self):
        return self._fm

    def _weights(self):
        """A copy of the model's weights: (n_features, 1 + K), or (n_features, G K) field-aware."""
        check_is_fitted(self)
        w = ffi.new("hog_weights *")
        lib.hog_model_weights(self._fm, w)
        n, k = int(w.features), int(w.outputs)
        return np.frombuffer(ffi.buffer(w.w, n * k * 4), dtype=np.float32).reshape(n, k).copy()

    @property
    def coef_(self):
        """The features' linear weights, (1, n_features), a copy; a
        field-aware machine has none (AttributeError)."""
        w = self._weights()
        if self.n_fields_:
            raise AttributeError("a field-aware factorisation machine has no linear weights (its factors: "
                                 "factors_)")
        return w[:, :1].T.astype(np.float64)

    @property
    def factors_(self):
        """The features' latent factors, a float32 copy: (n_features,
        n_factors), or (n_features, n_fields_, n_factors) field-aware, the
        factors feature j keeps for pairs with features of field g at
        [j, g]."""
        w = self._weights()
        if self.n_fields_:
            return w.reshape(w.shape[0], self.n_fields_, -1)
        return w[:, 1:]

    def __getstate__(self):
        state = dict(super().__getstate__())
        model = state.pop("_fm", None)
        if model is not None:
            state["_fm_file"] = _model_bytes(model)
        return state

    def __setstate__(self, state):
        state = dict(state)
        data = state.pop("_fm_file", None)
        super().__setstate__(state)
        if data is not None:
            self._fm = _model_of_bytes(data)


class HogwildFMClassifier(_FactorisationMachine, _Classifier):
    """A factorisation machine (Rendle 2010) for two classes, trained with
    HOGWILD! SGD on every core: a bias, a weight and n_factors latent
    factors a feature, every pair of a row's features crossed through their
    factors' dot product, so that it learns what pairs of features say
    together (this ad on this site) where a linear model cannot.

    field_aware=True makes it a field-aware one (LIBFFM's model): no linear
    weights, and n_factors factors a feature for each field, a pair of
    features crossed through the factors each keeps for the other's field.
    The fields are X's columns' (fit(X, y, fields=...): one field id, 0 to
    65535, for each column, kept as fields_ for predict) or a data file's
    own (LIBFFM text; Vowpal Wabbit namespaces and CSV columns are read as
    fields). A plain machine ignores fields.

    loss: 'logistic', 'hinge' or 'modified_huber' (two classes: wrap it in
    OneVsRestClassifier for more). factor_init: the factors start uniform
    in [-factor_init, factor_init] (0: 0.5/sqrt(n_factors)). The other
    parameters are HogwildClassifier's, with the defaults of `hogtrain train
    --model fm`: schedule='adagrad', step=0.2 (field-aware: 0.3; step=None
    chooses), normalized=False, and a
    penalty l2=1e-4, or for a field-aware machine l2_rows=1, l2 = l2_rows /
    rows trained on (give l2 or l2_rows to choose; the best penalty grows as
    the rows get fewer). kernel and batch are a linear model's only.

    partial_fit trains one epoch on the batch from the current model (its
    fields those of the first call), AdaGrad's sums starting afresh.

    Fitted: classes_, intercept_, coef_ (the linear weights, (1,
    n_features); not field-aware), factors_ (n_features, n_factors), or
    (n_features, n_fields_, n_factors) field-aware), n_fields_ (0 for a
    plain machine), fields_ (those given, or None), n_features_in_,
    n_iter_, epochs_done_, train_seconds_; coef_ and factors_ are copies of
    the model's. It pickles (its model file inside), save() writes the model
    file `hogtrain predict` reads, and hogtrain.load reads one back.
    """

    def __init__(self, *, loss="logistic", n_factors=4, field_aware=False, factor_init=0.0, epochs=20, step=None,
                 decay=0.8, schedule="adagrad", power=0.5, l2=None, l2_rows=None, l1=0.0, fit_intercept=True,
                 normalized=False, average=0, early_stop=0, holdout=0.0, replicas="machine", n_jobs=None, bind="auto",
                 random_state=None, mem_limit=0):
        super().__init__(loss=loss, n_factors=n_factors, field_aware=field_aware, factor_init=factor_init,
                         epochs=epochs, step=step, decay=decay, schedule=schedule, power=power, l2=l2,
                         l2_rows=l2_rows, l1=l1, fit_intercept=fit_intercept, normalized=normalized,
                         average=average, early_stop=early_stop, holdout=holdout, replicas=replicas, n_jobs=n_jobs,
                         bind=bind, random_state=random_state, mem_limit=mem_limit)

    def fit(self, X, y=None, sample_weight=None, fields=None):
        """Trains a new model on X (array, sparse matrix or data file path)
        and y (None for a path); fields: one field id for each column of X
        (field_aware=True needs them, or a file with fields). Returns self."""
        return self._fit(X, y, sample_weight, fields)

    def partial_fit(self, X, y=None, classes=None, sample_weight=None, fields=None):
        """Trains one epoch on this batch, from the current model (a new one
        on the first call, which must name both classes in classes, and
        gives the fields). Returns self."""
        return self._partial_fit(X, y, classes, sample_weight, fields)

    def _more_tags(self):
        return {"binary_only": True, "_xfail_checks": {"check_sample_weights_invariance": _ZERO_WEIGHTS}}


class HogwildFMRegressor(_FactorisationMachine, _Regressor):
    """A factorisation machine (Rendle 2010) for regression, trained with
    HOGWILD! SGD on every core: HogwildFMClassifier's model, parameters,
    fields and fitted attributes (classes_ apart), with loss 'squared' or
    'quantile' (the pinball loss at quantile, in (0, 1)).
    """

    def __init__(self, *, loss="squared", quantile=0.5, n_factors=4, field_aware=False, factor_init=0.0, epochs=20,
                 step=None, decay=0.8, schedule="adagrad", power=0.5, l2=None, l2_rows=None, l1=0.0,
                 fit_intercept=True, normalized=False, average=0, early_stop=0, holdout=0.0, replicas="machine",
                 n_jobs=None, bind="auto", random_state=None, mem_limit=0):
        super().__init__(loss=loss, n_factors=n_factors, field_aware=field_aware, factor_init=factor_init,
                         epochs=epochs, step=step, decay=decay, schedule=schedule, power=power, l2=l2,
                         l2_rows=l2_rows, l1=l1, fit_intercept=fit_intercept, normalized=normalized,
                         average=average, early_stop=early_stop, holdout=holdout, replicas=replicas, n_jobs=n_jobs,
                         bind=bind, random_state=random_state, mem_limit=mem_limit)
        self.quantile = quantile

    def fit(self, X, y=None, sample_weight=None, fields=None):
        """Trains a new model on X (array, sparse matrix or data file path)
        and y (None for a path); fields: one field id for each column of X
        (field_aware=True needs them, or a file with fields). Returns self."""
        return self._fit(X, y, sample_weight, fields)

    def partial_fit(self, X, y=None, sample_weight=None, fields=None):
        """Trains one epoch on this batch, from the current model (a new one
        on the first call, which gives the fields). Returns self."""
        return self._partial_fit(X, y, sample_weight, fields)

    def _more_tags(self):
        return {"_xfail_checks": {"check_sample_weights_invariance": _ZERO_WEIGHTS,
                                  "check_fit2d_1sample": _ONE_ROW}}


def load(path):
    """A fitted estimator from a hogtrain model file (`hogtrain train -o`,
    or save()): a HogwildRegressor for squared and quantile models, else a
    HogwildClassifier, or for a factorisation machine HogwildFMRegressor or
    HogwildFMClassifier, with the parameters the model was trained with. A
    field-aware machine's fields_ is None: it scores data files with fields
    (X's columns have no fields it knows)."""
    out = ffi.new("hog_model **")
    err = new_err()
    check(lib.hog_model_load(os.fsencode(path), out, err, len(err)), err)
    model = _gc_model(out[0])
    info = ffi.new("hog_model_info *")
    lib.hog_model_get_info(model, info)
    p = info.params
    loss = _name(lib.hog_loss_name, info.loss)
    common = dict(epochs=int(p.epochs), step=float(p.step), decay=float(p.decay),
                  schedule=_name(lib.hog_schedule_name, p.schedule), power=float(p.power),
                  replicas=_name(lib.hog_replicas_name, p.replicas), l1=float(p.l1), fit_intercept=bool(p.bias),
                  normalized=bool(p.normalized), average=int(p.average), early_stop=int(p.early_stop),
                  holdout=float(p.holdout), n_jobs=int(p.threads) or None, bind=bool(p.bind),
                  random_state=int(p.seed), mem_limit=int(p.mem_limit))
    regression = loss in ("squared", "quantile")
    if p.factors:
        common.update(n_factors=int(p.factors), field_aware=bool(p.field_aware), factor_init=float(p.factor_init))
        if p.l2_rows > 0:
            common.update(l2=None, l2_rows=float(p.l2_rows))
        else:
            common.update(l2=float(p.l2), l2_rows=None)
        est = (HogwildFMRegressor(loss=loss, quantile=float(p.quantile), **common) if regression
               else HogwildFMClassifier(loss=loss, **common))
        est.fields_ = None
    else:
        common.update(kernel=_name(lib.hog_kernel_name, p.kernel), l2=float(p.l2), batch=int(p.batch))
        est = (HogwildRegressor(loss=loss, quantile=float(p.quantile), **common) if regression
               else HogwildClassifier(loss="logistic" if loss == "softmax" else loss, **common))
    values = None
    if not regression:
        w = ffi.new("hog_weights *")
        lib.hog_model_weights(model, w)
        values = np.frombuffer(ffi.buffer(w.class_labels, 8 * int(w.classes)), dtype=np.float64).copy()
        est.classes_ = _model_classes(model, values)
    est.n_features_in_ = int(info.features)
    est._index_base = int(info.data_index_base)
    est._take(model, values)
    est.epochs_done_ = est.n_iter_
    return est
